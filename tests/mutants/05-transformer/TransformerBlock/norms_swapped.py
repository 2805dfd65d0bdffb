# Uses norm2 before attention and norm1 before the feed-forward layer (pre-norm).
# replace: x = x + self.attn(self.norm1(x), mask)[0]\n            return x + self.ff(self.norm2(x))
# with: x = x + self.attn(self.norm2(x), mask)[0]\n            return x + self.ff(self.norm1(x))
