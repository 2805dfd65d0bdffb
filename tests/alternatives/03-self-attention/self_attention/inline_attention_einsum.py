# Does not call scaled_dot_product_attention: projections and attention inline with einsum.
def self_attention(X, W_q, W_k, W_v, mask=None):
    Q, K, V = (np.einsum("...nd,dk->...nk", X, W) for W in (W_q, W_k, W_v))
    scores = np.einsum("...qk,...nk->...qn", Q, K) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return weights @ V, weights
