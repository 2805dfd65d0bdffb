# Returns the weights averaged over heads, (B, T, T).
# replace: return self.out(merged), weights
# with: return self.out(merged), weights.mean(dim=1)
