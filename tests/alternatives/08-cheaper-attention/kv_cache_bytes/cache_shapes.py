# The shapes of the caches (B = 1), multiplied out with math.prod.
def kv_cache_bytes(kind, T, n_layers, d_model, n_heads, dtype_bytes, **kw):
    d_head = d_model // n_heads
    sinks = kw.get("sinks", 0)
    shapes = {
        "mha": lambda: [(1, n_heads, T, d_head)] * 2,
        "gqa": lambda: [(1, kw["n_kv_heads"], T, d_head)] * 2,
        "mla": lambda: [(1, T, kw["d_latent"])],
        "window": lambda: [(1, n_heads, min(T, kw["window"] + sinks), d_head)] * 2,
        "linear": lambda: [(1, n_heads, kw["d_head"], kw["d_head"]), (1, n_heads, kw["d_head"])],
    }[kind]()
    return n_layers * dtype_bytes * sum(math.prod(shape) for shape in shapes)
