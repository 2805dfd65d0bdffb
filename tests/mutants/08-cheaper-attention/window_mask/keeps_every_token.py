# The cache keeps every token ever appended and returns only the kept ones: the right values, and a memory that grows
# with every token instead of staying at window + sinks.
# replace: K = k if self.K is None else torch.cat([self.K, k], dim=2)
# with: K = self.K = k if self.K is None else torch.cat([self.K, k], dim=2)
# replace: V = v if self.V is None else torch.cat([self.V, v], dim=2)
# with: V = self.V = v if self.V is None else torch.cat([self.V, v], dim=2)
# replace: self.K, self.V = K, V
# with: pass
