# Aligns the new queries with the first key instead of the last: with a cache, new query i sees keys j <= i only.
# replace: <= torch.arange(t, device=x.device)[:, None] + (T - t)
# with: <= torch.arange(t, device=x.device)[:, None]
