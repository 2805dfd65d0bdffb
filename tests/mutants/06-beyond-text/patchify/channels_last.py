# Flattens each patch channels last, in (p, p, C) order, as an image stored (H, W, C) would be.
# replace: patches = grid.permute(0, 2, 4, 1, 3, 5)
# with: patches = grid.permute(0, 2, 4, 3, 5, 1)
