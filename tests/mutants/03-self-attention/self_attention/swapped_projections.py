# Projects the queries with W_k and the keys with W_q: the transposed score matrix.
def self_attention(X, W_q, W_k, W_v, mask=None):
    X = np.asarray(X, dtype=float)
    return scaled_dot_product_attention(X @ W_k, X @ W_q, X @ W_v, mask)
