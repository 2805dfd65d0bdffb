# Reads each chunk once, keeps its exponentials against the maximum of the time, and rescales them all at the end.
def online_softmax(x, chunk_size):
    pieces, running_max, normaliser = [], -np.inf, 0.0
    for start in range(0, len(x), chunk_size):
        chunk = np.asarray(x[start:start + chunk_size], dtype=float)
        new_max = max(running_max, chunk.max())
        if new_max > -np.inf:
            normaliser = normaliser * np.exp(running_max - new_max) + np.exp(chunk - new_max).sum()
        pieces.append((np.exp(chunk - new_max) if new_max > -np.inf else np.zeros_like(chunk), new_max))
        running_max = new_max
    if normaliser == 0.0:
        return np.zeros(len(x))
    return np.concatenate([e * np.exp(m - running_max) if m > -np.inf else e for e, m in pieces]) / normaliser
