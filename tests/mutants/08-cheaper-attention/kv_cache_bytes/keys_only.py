# Counts the keys only: multi-head attention's cache without its values.
# replace: per_layer = 2 * T * n_heads * d_head
# with: per_layer = T * n_heads * d_head
