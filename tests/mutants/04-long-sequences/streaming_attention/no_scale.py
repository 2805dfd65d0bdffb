# Forgets the 1 / sqrt(d) scale of the scores.
def streaming_attention(Q, K, V, chunk_size):
    running_max = np.full((Q.shape[0], 1), -np.inf)
    normaliser = np.zeros((Q.shape[0], 1))
    output = np.zeros((Q.shape[0], V.shape[-1]))
    for start in range(0, K.shape[0], chunk_size):
        scores = Q @ K[start:start + chunk_size].T
        new_max = np.maximum(running_max, scores.max(axis=1, keepdims=True))
        rescale = np.exp(running_max - new_max)
        weights = np.exp(scores - new_max)
        normaliser = normaliser * rescale + weights.sum(axis=1, keepdims=True)
        output = output * rescale + weights @ V[start:start + chunk_size]
        running_max = new_max
    return output / normaliser
