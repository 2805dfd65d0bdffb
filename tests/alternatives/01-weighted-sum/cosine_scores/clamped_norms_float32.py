# Normalises rows in float32 with the norm clamped away from 0 (a zero vector stays zero).
def cosine_scores(queries, keys):
    def unit(x):
        x = np.asarray(x, dtype=np.float32)
        return x / np.maximum(np.sqrt((x * x).sum(axis=1, keepdims=True)), np.float32(1e-12))

    return unit(queries) @ unit(keys).T
