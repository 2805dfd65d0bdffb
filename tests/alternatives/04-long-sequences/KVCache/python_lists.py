# Keeps Python lists of keys and values and stacks them when attending.
class KVCache:
    """Keys and values of the tokens generated so far, and attention over them."""

    def __init__(self, d_k, d_v):
        self.d_k = d_k
        self.keys, self.values = [], []

    def append(self, k, v):
        self.keys.append(np.array(k, dtype=float))
        self.values.append(np.array(v, dtype=float))

    def attend(self, q):
        scores = np.stack(self.keys) @ np.asarray(q, dtype=float) / np.sqrt(self.d_k)
        weights = np.exp(scores - scores.max())
        return weights / weights.sum() @ np.stack(self.values)

    def __len__(self):
        return len(self.keys)


def incremental_self_attention(X, W_q, W_k, W_v):
    """Causal self-attention computed one token at a time with a KVCache: X (n, d_model) -> (n, d_v)."""
    cache = KVCache(W_k.shape[1], W_v.shape[1])
    outputs = []
    for t in range(len(X)):
        cache.append(X[t] @ W_k, X[t] @ W_v)
        outputs.append(cache.attend(X[t] @ W_q))
    return np.stack(outputs)
