# einsum throughout, and D read from the output: rowsum(dO * O).
def attention_backward(Q, K, V, dO, mask=None):
    d = Q.shape[-1]
    scores = np.einsum("id,jd->ij", Q, K) / np.sqrt(d)
    allowed = np.ones_like(scores, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    some_key = allowed.any(axis=1, keepdims=True)
    safe = np.where(allowed, scores, -np.inf)
    top = np.where(some_key, safe.max(axis=1, keepdims=True), 0.0)
    exps = np.where(allowed, np.exp(np.where(allowed, scores, top) - top), 0.0)
    P = exps / np.where(some_key, exps.sum(axis=1, keepdims=True), 1.0)
    O = np.einsum("ij,jc->ic", P, V)
    D = np.einsum("ic,ic->i", dO, O)
    dP = np.einsum("ic,jc->ij", dO, V)
    dS = P * (dP - D[:, None])
    return (np.einsum("ij,jd->id", dS, K) / np.sqrt(d), np.einsum("ij,id->jd", dS, Q) / np.sqrt(d),
            np.einsum("ij,ic->jc", P, dO))
