# Expands the squared distance as |q|^2 + |k|^2 - 2 q.k, as fast implementations do.
def gaussian_scores(queries, keys, bandwidth):
    queries, keys = np.asarray(queries, dtype=float), np.asarray(keys, dtype=float)
    squared = (queries**2).sum(1)[:, None] + (keys**2).sum(1)[None, :] - 2 * queries @ keys.T
    return -np.maximum(squared, 0.0) / (2 * bandwidth**2)
