# Averages over every position, counting the positions that are not repeated as 0.
# replace: / repeated.sum())
# with: / repeated.numel())
