# One helper applies a sublayer with its residual and norm in either order; the mask may be given as ints.
class TransformerBlock(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__()
        self.norm_first = norm_first
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def _sublayer(self, x, norm, fn):
        if self.norm_first:
            return x + fn(norm(x))
        return norm(x + fn(x))

    def forward(self, x, mask=None):
        m = None if mask is None else torch.as_tensor(mask).to(torch.int64)
        x = self._sublayer(x, self.norm1, lambda h: self.attn(h, m)[0])
        return self._sublayer(x, self.norm2, self.ff)
