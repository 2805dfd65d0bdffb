# Splits heads by striding (feature f goes to head f % h) instead of consecutive blocks.
# replace: t.reshape(B, T, self.num_heads, self.d_head).transpose(1, 2)
# with: t.reshape(B, T, self.d_head, self.num_heads).permute(0, 3, 1, 2)
