# Forgets the residual connection around the feed-forward layer (pre-norm).
# replace: return x + self.ff(self.norm2(x))
# with: return self.ff(self.norm2(x))
