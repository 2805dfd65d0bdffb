# Query head h reads key-value head h % n_kv_heads (the kv heads tiled) instead of h // group (each repeated).
# replace: q = q.reshape(B, self.n_kv_heads, group, t, self.d_head)
# with: q = q.reshape(B, group, self.n_kv_heads, t, self.d_head).transpose(1, 2)
# replace: heads = (weights @ v[:, :, None]).reshape(B, self.n_heads, t, self.d_head)
# with: heads = (weights @ v[:, :, None]).transpose(1, 2).reshape(B, self.n_heads, t, self.d_head)
