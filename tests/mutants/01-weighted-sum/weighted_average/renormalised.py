# Divides by the sum of the weights: nan for a row of zeros, wrong for unnormalised weights.
def weighted_average(weights, values):
    weights = np.asarray(weights, dtype=float)
    return (weights @ np.asarray(values, dtype=float)) / weights.sum(axis=-1, keepdims=True)
