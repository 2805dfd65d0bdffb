# Divides by the sum over the whole array, not over each slice.
def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    shift = np.max(x, axis=axis, keepdims=True)
    shift = np.where(np.isfinite(shift), shift, 0.0)
    e = np.exp(x - shift)
    total = e.sum()
    return e / total if total > 0 else e
