# Works in float32, fills masked scores with -1e9 (not -inf) and zeroes the rows that may attend to nothing.
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=np.float32) for a in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.float32(np.sqrt(Q.shape[-1]))
    if mask is None:
        mask = np.ones(scores.shape, dtype=bool)
    mask = np.broadcast_to(mask, scores.shape)
    scores = np.where(mask, scores, np.float32(-1e9))
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True) * mask.any(axis=-1, keepdims=True)
    return weights @ V, weights
