# Broadcasts weights (..., n, 1) against values (n, d) and sums over the keys.
def weighted_average(weights, values):
    weights = np.asarray(weights, dtype=float)
    return (weights[..., :, None] * np.asarray(values, dtype=float)).sum(axis=-2)
