# The parallel form with torch.cumsum of the outer products phi(k_j) v_jᵀ (S_i for every i at once); the chunked
# form over chunks with einsum; the recurrent form writes phi out as torch.where.
def _features(x):
    return torch.where(x > 0, x + 1, torch.exp(x))


def linear_attention(q, k, v, causal=True, chunk_size=None):
    fq, fk = _features(q), _features(k)
    if not causal:
        S = torch.einsum("bhnd,bhne->bhde", fk, v)
        z = fk.sum(2)
        return torch.einsum("bhnd,bhde->bhne", fq, S) / torch.einsum("bhnd,bhd->bhn", fq, z)[..., None]
    if chunk_size is None:
        S = torch.cumsum(fk[..., :, None] * v[..., None, :], dim=2)  # (B, H, n, d, d_v)
        z = torch.cumsum(fk, dim=2)
        return torch.einsum("bhnd,bhnde->bhne", fq, S) / (fq * z).sum(-1, keepdim=True)
    n = q.shape[2]
    S = torch.zeros(*q.shape[:2], q.shape[3], v.shape[3], dtype=q.dtype)
    z = torch.zeros(*q.shape[:2], q.shape[3], dtype=q.dtype)
    pieces = []
    for a in range(0, n, chunk_size):
        b = min(a + chunk_size, n)
        A = torch.einsum("bhid,bhjd->bhij", fq[:, :, a:b], fk[:, :, a:b])
        A = A * torch.ones(b - a, b - a, dtype=torch.bool).tril()
        top = torch.einsum("bhid,bhde->bhie", fq[:, :, a:b], S) + A @ v[:, :, a:b]
        bottom = torch.einsum("bhid,bhd->bhi", fq[:, :, a:b], z) + A.sum(-1)
        pieces.append(top / bottom[..., None])
        S = S + torch.einsum("bhjd,bhje->bhde", fk[:, :, a:b], v[:, :, a:b])
        z = z + fk[:, :, a:b].sum(2)
    return torch.cat(pieces, dim=2)


def recurrent_linear_attention(q, k, v, state=None):
    B, H, n, d = q.shape
    if state is None:
        state = (torch.zeros(B, H, d, v.shape[-1], dtype=q.dtype), torch.zeros(B, H, d, dtype=q.dtype))
    S, z = state
    out = torch.empty(B, H, n, v.shape[-1], dtype=q.dtype)
    for i in range(n):
        a, b = _features(q[:, :, i]), _features(k[:, :, i])
        S = S + torch.einsum("bhd,bhe->bhde", b, v[:, :, i])
        z = z + b
        out[:, :, i] = torch.einsum("bhd,bhde->bhe", a, S) / torch.einsum("bhd,bhd->bh", a, z)[..., None]
    return out, (S, z)
