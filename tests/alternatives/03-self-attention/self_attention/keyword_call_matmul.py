# Projects with np.matmul and calls scaled_dot_product_attention with keywords.
def self_attention(X, W_q, W_k, W_v, mask=None):
    return scaled_dot_product_attention(Q=np.matmul(X, W_q), K=np.matmul(X, W_k), V=np.matmul(X, W_v), mask=mask)
