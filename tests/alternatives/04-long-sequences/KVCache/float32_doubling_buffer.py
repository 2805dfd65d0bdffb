# A float32 buffer that doubles its capacity when full (amortised O(1) appends), as growable caches do.
class KVCache:
    """Keys and values of the tokens generated so far, and attention over them."""

    def __init__(self, d_k, d_v):
        self.keys = np.empty((4, d_k), dtype=np.float32)
        self.values = np.empty((4, d_v), dtype=np.float32)
        self.length = 0

    def append(self, k, v):
        if self.length == len(self.keys):
            self.keys = np.concatenate([self.keys, np.empty_like(self.keys)])
            self.values = np.concatenate([self.values, np.empty_like(self.values)])
        self.keys[self.length], self.values[self.length] = k, v
        self.length += 1

    def attend(self, q):
        keys, values = self.keys[: self.length], self.values[: self.length]
        scores = keys @ np.asarray(q, dtype=np.float32) / np.float32(np.sqrt(keys.shape[1]))
        weights = np.exp(scores - scores.max())
        return (weights / weights.sum()) @ values

    def __len__(self):
        return self.length


def incremental_self_attention(X, W_q, W_k, W_v):
    """Causal self-attention computed one token at a time with a KVCache: X (n, d_model) -> (n, d_v)."""
    cache = KVCache(W_k.shape[1], W_v.shape[1])
    rows = []
    for x in X:
        cache.append(x @ W_k, x @ W_v)
        rows.append(cache.attend(x @ W_q))
    return np.array(rows, dtype=np.float32)
