# Flattens each patch column by column (its p x p pixels transposed) instead of row by row.
# replace: patches = grid.permute(0, 2, 4, 1, 3, 5)
# with: patches = grid.permute(0, 2, 4, 1, 5, 3)
