# Normalises over the queries (dim 1) instead of the keys.
# replace: scores.softmax(dim=-1)
# with: scores.softmax(dim=1)
