# The chunked form all at once: pad n up to a multiple of c, reshape into chunks, and carry the state with an
# exclusive cumulative sum over the chunks; the parallel form is one chunk of n; the recurrent form is the chunked
# form with chunks of one token, continuing from the given state.
def _phi(x):
    return F.elu(x) + 1


def _chunked(q, k, v, c, S0=None, z0=None):
    B, H, n, d = q.shape
    pad = (-n) % c
    fq, fk = _phi(q), _phi(k)
    # Padded keys are zero features: they add nothing; padded queries are cut off at the end (their 0/0 too).
    fq, fk, v = (F.pad(t, (0, 0, 0, pad)) for t in (fq, fk, v))
    m = (n + pad) // c
    fq, fk, v = (t.reshape(B, H, m, c, t.shape[-1]) for t in (fq, fk, v))
    per_chunk_S = fk.transpose(-2, -1) @ v  # (B, H, m, d, d_v)
    per_chunk_z = fk.sum(-2)  # (B, H, m, d)
    S = per_chunk_S.cumsum(2) - per_chunk_S  # the state before each chunk
    z = per_chunk_z.cumsum(2) - per_chunk_z
    if S0 is not None:
        S, z = S + S0[:, :, None], z + z0[:, :, None]
    A = (fq @ fk.transpose(-2, -1)).tril()
    top = fq @ S + A @ v
    bottom = (fq * z[..., None, :]).sum(dim=-1) + A.sum(dim=-1)
    out = (top / bottom[..., None]).reshape(B, H, m * c, -1)[:, :, :n]
    return out, S[:, :, -1] + per_chunk_S[:, :, -1], z[:, :, -1] + per_chunk_z[:, :, -1]


def linear_attention(q, k, v, causal=True, chunk_size=None):
    if not causal:
        fq, fk = _phi(q), _phi(k)
        return (fq @ (fk.transpose(-2, -1) @ v)) / (fq @ fk.sum(-2).unsqueeze(-1))
    return _chunked(q, k, v, q.shape[-2] if chunk_size is None else chunk_size)[0]


def recurrent_linear_attention(q, k, v, state=None):
    S0, z0 = (None, None) if state is None else state
    out, S, z = _chunked(q, k, v, 1, S0, z0)
    return out, (S, z)
