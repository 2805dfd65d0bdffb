# Computes L inside the loop, before the last block updates the running normaliser: L misses the last block.
# replace:             # L after the last block: mu + log(l); -inf (+ log 0 = -inf) for a query with no allowed key.\n            L[..., i0:i1] = (run_max + torch.log(run_sum)).squeeze(-1)\n
# with: 
# replace:                 run_sum = run_sum * rescale + weights.sum(dim=-1, keepdim=True)
# with:                 L[..., i0:i1] = (run_max + torch.log(run_sum)).squeeze(-1)\n                run_sum = run_sum * rescale + weights.sum(dim=-1, keepdim=True)
