# Casts K and V to float32 once and scales K once (one O(n d) copy), then streams over chunks.
def streaming_attention(Q, K, V, chunk_size):
    Q = np.asarray(Q, dtype=np.float32)
    K = np.asarray(K, dtype=np.float32) / np.float32(np.sqrt(Q.shape[-1]))
    V = np.asarray(V, dtype=np.float32)
    top = np.full((Q.shape[0], 1), -np.inf, dtype=np.float32)
    total = np.zeros((Q.shape[0], 1), dtype=np.float32)
    acc = np.zeros((Q.shape[0], V.shape[1]), dtype=np.float32)
    for start in range(0, K.shape[0], chunk_size):
        s = Q @ K[start:start + chunk_size].T
        new_top = np.maximum(top, s.max(axis=1, keepdims=True))
        factor = np.exp(top - new_top)
        p = np.exp(s - new_top)
        total = total * factor + p.sum(axis=1, keepdims=True)
        acc = acc * factor + p @ V[start:start + chunk_size]
        top = new_top
    return acc / total
