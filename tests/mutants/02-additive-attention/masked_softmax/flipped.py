# Opposite polarity: hides the keys where the mask is True.
def masked_softmax(scores, mask):
    scores = np.where(np.asarray(mask, dtype=bool), -np.inf, np.asarray(scores, dtype=float))
    shift = np.max(scores, axis=-1, keepdims=True)
    shift = np.where(np.isfinite(shift), shift, 0.0)
    e = np.exp(scores - shift)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
