# Scales the scores by 1/sqrt(d_model) instead of 1/sqrt(d_head).
# replace: / math.sqrt(self.d_head)  # (B, n_kv, group, t, T)
# with: / math.sqrt(d_model)
