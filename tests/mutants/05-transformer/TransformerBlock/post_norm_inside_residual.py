# Post-norm with the LayerNorm inside the residual branch: x + LN(Attn(x)) instead of LN(x + Attn(x)).
# replace: x = self.norm1(x + self.attn(x, mask)[0])\n        return self.norm2(x + self.ff(x))
# with: x = x + self.norm1(self.attn(x, mask)[0])\n        return x + self.norm2(self.ff(x))
