# Uses PyTorch as its reference and returns np.bool_ from .all() (truth by value, not identity).
def check_attention(attn_fn):
    rng = np.random.default_rng(7)
    for batch, m, n, d_k, d_v in [((), 2, 3, 4, 5), ((3,), 4, 6, 2, 2)]:
        Q, K, V = (rng.normal(size=batch + s) for s in ((m, d_k), (n, d_k), (n, d_v)))
        mask = rng.random(batch + (m, n)) < 0.5
        mask[..., -1] = True
        for msk in (None, mask):
            scores = torch.from_numpy(Q) @ torch.from_numpy(K).transpose(-1, -2) / d_k**0.5
            if msk is not None:
                scores = scores.masked_fill(~torch.from_numpy(msk), float("-inf"))
            expected_w = torch.softmax(scores, -1).numpy()
            try:
                out, w = attn_fn(Q, K, V, msk)
                if np.shape(out) != expected_w.shape[:-1] + (d_v,) or np.shape(w) != expected_w.shape:
                    return False
                ok = (abs(np.asarray(w) - expected_w) < 1e-6).all() and (abs(np.asarray(out) - expected_w @ V) < 1e-6).all()
            except Exception:
                return False
            if not ok:
                return ok
    return (abs(np.zeros(1)) < 1).all()
