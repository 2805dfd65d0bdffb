# Fills masked scores with -1e9: a fully masked row becomes uniform instead of zero.
def masked_softmax(scores, mask):
    scores = np.where(np.asarray(mask, dtype=bool), np.asarray(scores, dtype=float), -1e9)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
