# Masks with -inf, and picks 0 with np.where for empty rows (NumPy warns about the 0 / 0 it discards).
def masked_softmax(scores, mask):
    scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    total = e.sum(axis=-1, keepdims=True)
    return np.where(total > 0, e / total, 0.0)
