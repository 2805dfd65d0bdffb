# Keeps a state per token for linear attention, as if it were a KV cache: T times too much.
# replace: per_layer = n_heads * (kw["d_head"] * kw["d_head"] + kw["d_head"])
# with: per_layer = T * n_heads * (kw["d_head"] * kw["d_head"] + kw["d_head"])
