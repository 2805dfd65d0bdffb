# Scales by sqrt(d_model) (the embedding size) instead of sqrt(d_k).
def self_attention(X, W_q, W_k, W_v, mask=None):
    X = np.asarray(X, dtype=float)
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(X.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights @ V, weights
