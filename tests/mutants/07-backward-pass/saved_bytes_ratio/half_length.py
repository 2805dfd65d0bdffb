# Measures at m = n = 1024 instead of 2048: the weights are a quarter of the size, the ratio about half.
# replace: torch.randn(1, 1, 2048, 64,
# with: torch.randn(1, 1, 1024, 64,
