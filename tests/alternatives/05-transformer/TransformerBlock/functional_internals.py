# Creates the parts in another order and writes the sublayers with F.layer_norm and F.gelu on the modules' parameters.
class TransformerBlock(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__()
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))
        self.norm2 = nn.LayerNorm(d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.pre = bool(norm_first)

    def _ln(self, norm, x):
        return F.layer_norm(x, norm.normalized_shape, norm.weight, norm.bias, norm.eps)

    def _mix(self, x, mask):
        return self.attn(x, mask)[0]

    def _transform(self, x):
        return F.linear(F.gelu(F.linear(x, self.ff[0].weight, self.ff[0].bias)), self.ff[2].weight, self.ff[2].bias)

    def forward(self, x, mask=None):
        if self.pre:
            h = x + self._mix(self._ln(self.norm1, x), mask)
            return h + self._transform(self._ln(self.norm2, h))
        h = self._ln(self.norm1, x + self._mix(x, mask))
        return self._ln(self.norm2, h + self._transform(h))
