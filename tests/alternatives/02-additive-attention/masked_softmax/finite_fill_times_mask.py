# Fills masked scores with a finite -1e30, then multiplies the exponentials by the mask (no -inf anywhere).
def masked_softmax(scores, mask):
    scores = np.asarray(scores, dtype=float)
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), scores.shape)
    filled = np.where(mask, scores, -1e30)
    e = np.exp(filled - filled.max(axis=-1, keepdims=True)) * mask
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
