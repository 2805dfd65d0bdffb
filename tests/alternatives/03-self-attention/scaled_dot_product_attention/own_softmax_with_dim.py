# Defines its own softmax(x, dim) (shadowing the given one, with another signature) and uses einsum.
def softmax(x, dim=-1):
    x = np.asarray(x, dtype=float)
    top = np.max(x, axis=dim, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=dim, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = np.einsum("...md,...nd->...mn", Q, K) / np.sqrt(np.shape(Q)[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, dim=-1)
    return np.einsum("...mn,...nd->...md", weights, V), weights
