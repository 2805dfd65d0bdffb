# Saves L = +inf (not -inf) for a query with no allowed key, as flash-attn's own code does (normalize_softmax_lse):
# exp(S - inf) = 0 recomputes zero weights for it all the same.
# replace: L[..., i0:i1] = (run_max + torch.log(run_sum)).squeeze(-1)
# with: L[..., i0:i1] = torch.where(run_sum > 0, run_max + torch.log(run_sum), math.inf).squeeze(-1)
