# Takes the patches in column-major order (down the first column of the grid first) instead of row-major order.
# replace: patches = grid.permute(0, 2, 4, 1, 3, 5)
# with: patches = grid.permute(0, 4, 2, 1, 3, 5)
