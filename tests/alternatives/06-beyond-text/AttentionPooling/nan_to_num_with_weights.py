# Calls nn.MultiheadAttention as it comes (need_weights=True, the default): an empty set's output is nan there, and
# nan_to_num turns it into the zeros asked for.
class AttentionPooling(nn.Module):
    def __init__(self, d_model, num_heads, num_seeds=1):
        super().__init__()
        self.seeds = nn.Parameter(0.02 * torch.randn(1, num_seeds, d_model))
        self.attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True)

    def forward(self, x, present=None):
        seeds = self.seeds.repeat(x.shape[0], 1, 1)
        ignored = None if present is None else torch.logical_not(present)
        pooled, _ = self.attn(seeds, x, x, key_padding_mask=ignored)
        return torch.nan_to_num(pooled, nan=0.0)
