# Ignores chunk_size: converts all of x at once and applies a plain softmax (right values, not the online algorithm).
def online_softmax(x, chunk_size):
    x = np.asarray(x, dtype=float)
    if np.all(np.isneginf(x)):
        return np.zeros_like(x)
    e = np.exp(x - x.max())
    return e / e.sum()
