# Finds the maximum in one pass and the normaliser in another: right values, but three passes over x, not two.
def online_softmax(x, chunk_size):
    n = len(x)
    top = -np.inf
    for start in range(0, n, chunk_size):
        top = max(top, float(np.max(x[start:start + chunk_size])))
    if top == -np.inf:
        return np.zeros(n)
    total = sum(float(np.exp(x[start:start + chunk_size] - top).sum()) for start in range(0, n, chunk_size))
    return np.concatenate([np.exp(x[start:start + chunk_size] - top) / total for start in range(0, n, chunk_size)])
