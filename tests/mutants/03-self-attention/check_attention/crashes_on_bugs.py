# Lets the buggy implementation's exception escape instead of returning False.
def check_attention(attn_fn):
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 2))
    mask = rng.random((2, 3, 5)) < 0.5
    mask[..., 0] = True
    out, w = attn_fn(Q, K, V, mask)
    expected_out, expected_w = scaled_dot_product_attention(Q, K, V, mask)
    return bool(np.allclose(out, expected_out) and np.allclose(w, expected_w))
