# Returns 0/1 integers instead of booleans.
def causal_mask(n):
    return np.tril(np.ones((n, n), dtype=int))
