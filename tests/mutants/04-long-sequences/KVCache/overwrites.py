# Keeps only the latest key and value instead of appending.
class KVCache:
    def __init__(self, d_k, d_v):
        self.keys = np.zeros((0, d_k))
        self.values = np.zeros((0, d_v))

    def append(self, k, v):
        self.keys = np.asarray(k, dtype=float)[None]
        self.values = np.asarray(v, dtype=float)[None]

    def attend(self, q):
        scores = self.keys @ np.asarray(q, dtype=float) / np.sqrt(self.keys.shape[1])
        weights = np.exp(scores - scores.max())
        return weights @ self.values / weights.sum()

    def __len__(self):
        return self.keys.shape[0]


def incremental_self_attention(X, W_q, W_k, W_v):
    cache = KVCache(W_k.shape[1], W_v.shape[1])
    outputs = []
    for x in np.asarray(X, dtype=float):
        cache.append(x @ W_k, x @ W_v)
        outputs.append(cache.attend(x @ W_q))
    return np.array(outputs)
