# Pools by the mean of the real elements (Deep Sets' pooling), one copy per seed, instead of by attention.
class AttentionPooling(nn.Module):
    def __init__(self, d_model, num_heads, num_seeds=1):
        super().__init__()
        self.seeds = nn.Parameter(torch.randn(1, num_seeds, d_model) / math.sqrt(d_model))
        self.attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True)

    def forward(self, x, present=None):
        if present is None:
            present = torch.ones(x.shape[:2], dtype=torch.bool)
        weights = torch.as_tensor(present, dtype=x.dtype)[..., None]
        mean = (x * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1)
        return mean[:, None].expand(-1, self.seeds.shape[1], -1)
