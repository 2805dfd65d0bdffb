# Normalises each key's column over the queries instead of each query's row over the keys.
def attention_pool(queries, keys, values, score_fn):
    weights = softmax(score_fn(queries, keys), axis=0)
    return weighted_average(weights, values), weights
