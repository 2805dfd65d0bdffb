# A match statement: numbers kept per token and layer, or per layer for the state of linear attention.
def kv_cache_bytes(kind, T, n_layers, d_model, n_heads, dtype_bytes, **kw):
    head = d_model // n_heads
    match kind:
        case "mha":
            numbers = T * 2 * d_model
        case "gqa":
            numbers = T * 2 * kw["n_kv_heads"] * head
        case "mla":
            numbers = T * kw["d_latent"]
        case "window":
            numbers = min(T, kw["window"] + kw.get("sinks", 0)) * 2 * d_model
        case "linear":
            numbers = n_heads * kw["d_head"] * (kw["d_head"] + 1)
        case _:
            raise ValueError(kind)
    return numbers * n_layers * dtype_bytes
