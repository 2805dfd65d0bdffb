# Rescales the normaliser when the maximum grows, but forgets the running output.
def streaming_attention(Q, K, V, chunk_size):
    scale = 1.0 / np.sqrt(Q.shape[-1])
    running_max = np.full((Q.shape[0], 1), -np.inf)
    normaliser = np.zeros((Q.shape[0], 1))
    output = np.zeros((Q.shape[0], V.shape[-1]))
    for start in range(0, K.shape[0], chunk_size):
        scores = (Q @ K[start:start + chunk_size].T) * scale
        new_max = np.maximum(running_max, scores.max(axis=1, keepdims=True))
        weights = np.exp(scores - new_max)
        normaliser = normaliser * np.exp(running_max - new_max) + weights.sum(axis=1, keepdims=True)
        output = output + weights @ V[start:start + chunk_size]
        running_max = new_max
    return output / normaliser
