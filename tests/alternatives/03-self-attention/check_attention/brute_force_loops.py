# Checks against a brute-force loop over batch, queries and keys, plus the sums of the weights.
def check_attention(attn_fn):
    rng = np.random.default_rng(11)
    Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 3))
    mask = np.ones((2, 3, 5), dtype=bool)
    mask[0, :, 3:] = False
    mask[1, 1, :2] = False
    for msk in (None, mask):
        try:
            out, w = attn_fn(Q, K, V, msk)
            out, w = np.asarray(out, dtype=float), np.asarray(w, dtype=float)
        except Exception:
            return False
        if out.shape != (2, 3, 3) or w.shape != (2, 3, 5):
            return False
        for b in range(2):
            for i in range(3):
                scores = [sum(Q[b, i, t] * K[b, j, t] for t in range(4)) / 2.0 for j in range(5)]
                allowed = [msk is None or bool(msk[b, i, j]) for j in range(5)]
                top = max(s for s, a in zip(scores, allowed) if a)
                e = [math.exp(s - top) if a else 0.0 for s, a in zip(scores, allowed)]
                expected = [x / sum(e) for x in e]
                if not np.allclose(w[b, i], expected) or not np.allclose(out[b, i], np.array(expected) @ V[b]):
                    return False
    return True
