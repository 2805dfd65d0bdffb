# Lets each query see the future instead of the past.
def causal_mask(n):
    return np.triu(np.ones((n, n), dtype=bool))
