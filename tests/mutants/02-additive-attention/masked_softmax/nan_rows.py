# Uses -inf but does not guard fully masked rows: 0 / 0 = nan, with warnings.
def masked_softmax(scores, mask):
    scores = np.where(np.asarray(mask, dtype=bool), np.asarray(scores, dtype=float), -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
