# One query at a time: its allowed keys only, its own softmax and gradients, added into dK and dV.
def attention_backward(Q, K, V, dO, mask=None):
    m, d = Q.shape
    dQ, dK, dV = np.zeros_like(Q, dtype=float), np.zeros_like(K, dtype=float), np.zeros_like(V, dtype=float)
    for i in range(m):
        keys = np.arange(K.shape[0]) if mask is None else np.flatnonzero(np.asarray(mask)[i])
        if keys.size == 0:
            continue  # no key: zero output, nothing to add
        s = K[keys] @ Q[i] / np.sqrt(d)
        p = np.exp(s - s.max())
        p /= p.sum()
        dV[keys] += np.outer(p, dO[i])
        dp = V[keys] @ dO[i]
        ds = p * (dp - p @ dp)
        dQ[i] = ds @ K[keys] / np.sqrt(d)
        dK[keys] += np.outer(ds, Q[i]) / np.sqrt(d)
    return dQ, dK, dV
