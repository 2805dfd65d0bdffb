# Does not guard a first chunk of only -inf: exp(-inf - (-inf)) = nan.
def online_softmax(x, chunk_size):
    x = np.asarray(x, dtype=float)
    running_max, normaliser = -np.inf, 0.0
    for start in range(0, len(x), chunk_size):
        chunk = x[start:start + chunk_size]
        new_max = max(running_max, float(chunk.max()))
        normaliser = normaliser * np.exp(running_max - new_max) + np.exp(chunk - new_max).sum()
        running_max = new_max
    return np.exp(x - running_max) / normaliser
