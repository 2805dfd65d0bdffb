# Uses the raw scores as weights.
def attention_pool(queries, keys, values, score_fn):
    weights = score_fn(queries, keys)
    return weighted_average(weights, values), weights
