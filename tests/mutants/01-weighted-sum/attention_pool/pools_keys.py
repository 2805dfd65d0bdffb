# Pools the keys instead of the values.
def attention_pool(queries, keys, values, score_fn):
    weights = softmax(score_fn(queries, keys), axis=-1)
    return weighted_average(weights, keys), weights
