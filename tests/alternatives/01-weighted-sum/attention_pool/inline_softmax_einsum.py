# Does not call softmax or weighted_average: a softmax of its own and an einsum.
def attention_pool(queries, keys, values, score_fn):
    scores = np.asarray(score_fn(queries, keys), dtype=float)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return np.einsum("mn,nd->md", weights, values), weights
