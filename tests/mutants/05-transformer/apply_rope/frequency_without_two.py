# Uses base^(-i/d) instead of base^(-2i/d) for pair i.
# replace: -torch.arange(0, d, 2, dtype=torch.float64, device=x.device) / d
# with: -torch.arange(0, d // 2, dtype=torch.float64, device=x.device) / d
