# Excludes the diagonal: a token may not attend to itself, and the first token to nothing.
def causal_mask(n):
    return np.tril(np.ones((n, n), dtype=bool), k=-1)
