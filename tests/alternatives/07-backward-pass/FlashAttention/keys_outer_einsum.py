# Key blocks in the outer loop (every query at once, masked instead of skipped), einsum, and a backward pass with
# key blocks outside and query blocks inside.
class FlashAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, Q, K, V, causal=False, block_size=64):
        m, n, scale = Q.shape[-2], K.shape[-2], Q.shape[-1] ** -0.5
        top = torch.full(Q.shape[:-1], -math.inf, dtype=Q.dtype)
        total = torch.zeros(Q.shape[:-1], dtype=Q.dtype)
        acc = torch.zeros(*Q.shape[:-1], V.shape[-1], dtype=Q.dtype)
        rows = torch.arange(m)[:, None]
        for j0 in range(0, n, block_size):
            cols = torch.arange(j0, min(j0 + block_size, n))
            s = torch.einsum("bhid,bhjd->bhij", Q, K[..., cols, :]) * scale
            if causal:
                s = s.masked_fill(cols[None, :] > rows + n - m, -math.inf)
            new_top = torch.maximum(top, s.amax(-1))
            base = torch.nan_to_num(new_top, neginf=0.0)
            p = torch.exp(s - base[..., None])
            factor = torch.exp(top - base)
            total = total * factor + p.sum(-1)
            acc = acc * factor[..., None] + torch.einsum("bhij,bhjc->bhic", p, V[..., cols, :])
            top = new_top
        O = torch.where(total[..., None] > 0, acc / total.clamp_min(1e-300)[..., None], torch.zeros_like(acc))
        L = top + torch.log(total)
        ctx.save_for_backward(Q, K, V, O, L)
        ctx.causal, ctx.block_size = causal, block_size
        return O

    @staticmethod
    def backward(ctx, dO):
        Q, K, V, O, L = ctx.saved_tensors
        m, n, scale = Q.shape[-2], K.shape[-2], Q.shape[-1] ** -0.5
        D = torch.einsum("bhic,bhic->bhi", dO, O)
        dQ, dK, dV = torch.zeros_like(Q), torch.zeros_like(K), torch.zeros_like(V)
        for j0 in range(0, n, ctx.block_size):
            cols = torch.arange(j0, min(j0 + ctx.block_size, n))
            for i0 in range(0, m, ctx.block_size):
                rows = torch.arange(i0, min(i0 + ctx.block_size, m))
                s = torch.einsum("bhid,bhjd->bhij", Q[..., rows, :], K[..., cols, :]) * scale
                allowed = torch.isfinite(L[..., rows])[..., None].expand(s.shape)
                if ctx.causal:
                    allowed = allowed & (cols[None, :] <= rows[:, None] + n - m)
                p = torch.where(allowed, torch.exp(s - torch.nan_to_num(L[..., rows], neginf=0.0)[..., None]),
                                torch.zeros_like(s))
                dV[..., cols, :] += torch.einsum("bhij,bhic->bhjc", p, dO[..., rows, :])
                dp = torch.einsum("bhic,bhjc->bhij", dO[..., rows, :], V[..., cols, :])
                ds = p * (dp - D[..., rows, None])
                dQ[..., rows, :] += torch.einsum("bhij,bhjd->bhid", ds, K[..., cols, :]) * scale
                dK[..., cols, :] += torch.einsum("bhij,bhid->bhjd", ds, Q[..., rows, :]) * scale
        return dQ, dK, dV, None, None


def flash_attention(Q, K, V, causal=False, block_size=64):
    return FlashAttention.apply(Q, K, V, causal, block_size)
