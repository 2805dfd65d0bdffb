# FlashAttention-1's algorithm as the paper writes it: saves the running maximum mu and the normaliser ell of each
# query separately (two numbers per query instead of L = mu + log ell), and recomputes P = exp(S - mu) / ell.
# replace: L = Q.new_full(Q.shape[:-1], -math.inf)
# with: mu, ell = Q.new_full(Q.shape[:-1], -math.inf), Q.new_zeros(Q.shape[:-1])
# replace: L[..., i0:i1] = (run_max + torch.log(run_sum)).squeeze(-1)
# with: mu[..., i0:i1], ell[..., i0:i1] = run_max.squeeze(-1), run_sum.squeeze(-1)
# replace: ctx.save_for_backward(Q, K, V, output, L)
# with: ctx.save_for_backward(Q, K, V, output, mu, ell)
# replace: Q, K, V, output, L = ctx.saved_tensors
# with: Q, K, V, output, mu, ell = ctx.saved_tensors
# replace: L = torch.where(L == -math.inf, math.inf, L)
# with: mu, ell = torch.where(mu == -math.inf, math.inf, mu), torch.where(ell > 0, ell, 1.0)
# replace: weights = torch.exp(q @ k.transpose(-2, -1) * scale - L[..., i0:i1, None])
# with: weights = torch.exp(q @ k.transpose(-2, -1) * scale - mu[..., i0:i1, None]) / ell[..., i0:i1, None]
