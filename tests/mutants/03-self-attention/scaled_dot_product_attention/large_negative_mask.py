# Masks with -1e9 instead of -inf: a fully masked row gets uniform weights instead of zeros.
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -1e9)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
