# Stores every kv head repeated for its query heads (B, n_heads, T, d_head) in the cache, and reads one of each group
# back: the outputs are right, the cache is n_heads / n_kv_heads times too large.
# replace: k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
# with: k, v = torch.cat([cache[0][:, ::group], k], dim=2), torch.cat([cache[1][:, ::group], v], dim=2)
# replace: return self.out(heads.transpose(1, 2).reshape(B, t, d_model)), (k, v)
# with: return self.out(heads.transpose(1, 2).reshape(B, t, d_model)), (k.repeat_interleave(group, 1), v.repeat_interleave(group, 1))
