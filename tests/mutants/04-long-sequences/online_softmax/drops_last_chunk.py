# Iterates over whole chunks only, dropping a shorter last chunk from the normaliser.
def online_softmax(x, chunk_size):
    x = np.asarray(x, dtype=float)
    running_max, normaliser = -np.inf, 0.0
    for start in range(0, len(x) - chunk_size + 1, chunk_size):
        chunk = x[start:start + chunk_size]
        new_max = max(running_max, float(chunk.max()))
        if new_max == -np.inf:
            continue
        normaliser = normaliser * np.exp(running_max - new_max) + np.exp(chunk - new_max).sum()
        running_max = new_max
    if normaliser == 0.0:
        return np.zeros_like(x)
    return np.exp(x - running_max) / normaliser
