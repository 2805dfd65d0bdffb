# Adds dropout 0.1 on both sublayers, although the block must have none.
# replace: self.norm_first = norm_first
# with: self.norm_first = norm_first\n        self.drop = nn.Dropout(0.1)
# replace: x = x + self.attn(self.norm1(x), mask)[0]\n            return x + self.ff(self.norm2(x))
# with: x = x + self.drop(self.attn(self.norm1(x), mask)[0])\n            return x + self.drop(self.ff(self.norm2(x)))
