# Uses the log-sum-exp form, exp(x - logsumexp(x)), with the all -inf case handled by np.errstate.
def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    m = np.max(x, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        lse = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
        out = np.exp(x - lse)
    return np.where(np.isnan(out), 0.0, out)
