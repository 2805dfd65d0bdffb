# Expands a (T, T) mask to (B, T, T) before attention, names every residual, and creates the feed-forward layer first.
class TransformerBlock(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__()
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm_first = norm_first

    def forward(self, x, mask=None):
        if mask is not None:
            mask = torch.as_tensor(mask).bool()
            if mask.dim() == 2:
                mask = mask.unsqueeze(0).expand(x.shape[0], -1, -1)
        if self.norm_first:
            attended, _ = self.attn(self.norm1(x), mask=mask)
            residual = x + attended
            transformed = self.ff(self.norm2(residual))
            return residual + transformed
        attended, _ = self.attn(x, mask=mask)
        residual = self.norm1(x + attended)
        transformed = self.ff(residual)
        return self.norm2(residual + transformed)
