# Attends before adding the current token: token t never sees itself (and token 0 sees nothing).
class KVCache:
    def __init__(self, d_k, d_v):
        self.keys = np.zeros((0, d_k))
        self.values = np.zeros((0, d_v))

    def append(self, k, v):
        self.keys = np.vstack([self.keys, np.asarray(k, dtype=float)[None]])
        self.values = np.vstack([self.values, np.asarray(v, dtype=float)[None]])

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
        if len(cache):
            outputs.append(cache.attend(x @ W_q))
        else:
            outputs.append(np.zeros(W_v.shape[1]))
        cache.append(x @ W_k, x @ W_v)
    return np.array(outputs)
