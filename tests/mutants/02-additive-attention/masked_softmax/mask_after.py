# Softmax first, then zeroes the masked weights: rows no longer sum to 1.
def masked_softmax(scores, mask):
    scores = np.asarray(scores, dtype=float)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) * np.asarray(mask, dtype=bool)
