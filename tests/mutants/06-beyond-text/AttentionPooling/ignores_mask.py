# Ignores `present`: the seeds attend to the padding as if it were real elements.
class AttentionPooling(nn.Module):
    def __init__(self, d_model, num_heads, num_seeds=1):
        super().__init__()
        self.seeds = nn.Parameter(torch.randn(1, num_seeds, d_model) / math.sqrt(d_model))
        self.attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True)

    def forward(self, x, present=None):
        seeds = self.seeds.expand(x.shape[0], -1, -1)
        return self.attn(seeds, x, x, need_weights=False)[0]
