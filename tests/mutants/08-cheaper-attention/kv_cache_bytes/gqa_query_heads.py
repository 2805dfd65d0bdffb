# Counts grouped-query attention's cache with one kv head per query head (as if nothing were shared).
# replace: per_layer = 2 * T * kw["n_kv_heads"] * d_head
# with: per_layer = 2 * T * n_heads * d_head
