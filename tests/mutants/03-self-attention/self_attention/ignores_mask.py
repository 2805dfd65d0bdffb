# Drops the mask argument.
def self_attention(X, W_q, W_k, W_v, mask=None):
    X = np.asarray(X, dtype=float)
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)
