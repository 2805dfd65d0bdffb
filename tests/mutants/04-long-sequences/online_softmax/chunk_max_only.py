# Uses each chunk's own maximum and keeps the last one, without combining them.
def online_softmax(x, chunk_size):
    x = np.asarray(x, dtype=float)
    normaliser, shift = 0.0, 0.0
    for start in range(0, len(x), chunk_size):
        chunk = x[start:start + chunk_size]
        shift = float(chunk.max()) if np.isfinite(chunk.max()) else 0.0
        normaliser += np.exp(chunk - shift).sum()
    if normaliser == 0.0:
        return np.zeros_like(x)
    return np.exp(x - shift) / normaliser
