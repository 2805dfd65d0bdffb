# Returns (weights, output) instead of (output, weights).
def attention_pool(queries, keys, values, score_fn):
    weights = softmax(score_fn(queries, keys), axis=-1)
    return weights, weighted_average(weights, values)
