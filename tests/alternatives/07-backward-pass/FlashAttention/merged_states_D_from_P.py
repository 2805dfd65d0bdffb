# The forward pass summarises each key block by a state (m, l, o) and merges them in a balanced tree (split-K), as
# a binary counter: at most log2 of the blocks pending at once. The backward pass
# recomputes D from the weights, D = rowsum(P * dP), in a first sweep over the blocks, instead of from O.
def _merge(a, b):
    (m_a, l_a, o_a), (m_b, l_b, o_b) = a, b
    m = torch.maximum(m_a, m_b)
    base = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    w_a, w_b = l_a * torch.exp(m_a - base), l_b * torch.exp(m_b - base)
    l = w_a + w_b
    o = (w_a[..., None] * o_a + w_b[..., None] * o_b) / torch.where(l > 0, l, torch.ones_like(l))[..., None]
    return m, l, o


def _blocks(length, size):
    return [(start, min(start + size, length)) for start in range(0, length, size)]


def _weights(Q, K, L, i, j, causal, m, n):
    """The weights of query block i and key block j, recomputed from L (0 where masked or no key at all)."""
    s = Q[..., i[0]:i[1], :] @ K[..., j[0]:j[1], :].transpose(-2, -1) / math.sqrt(Q.shape[-1])
    lse = L[..., i[0]:i[1], None]
    p = torch.exp(s - torch.where(torch.isinf(lse), torch.full_like(lse, math.inf), lse))
    if causal:
        keep = torch.arange(j[0], j[1])[None, :] <= torch.arange(i[0], i[1])[:, None] + n - m
        p = p * keep
    return p


class FlashAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, Q, K, V, causal=False, block_size=64):
        m, n = Q.shape[-2], K.shape[-2]
        stack = []  # (level, state): two states of one level merge at once, a balanced tree of merges that holds
        # O(log(n / block_size)) states, never one per key block (each has an (m, d_v) output)
        for j0, j1 in _blocks(n, block_size):
            s = Q @ K[..., j0:j1, :].transpose(-2, -1) / math.sqrt(Q.shape[-1])
            if causal:
                s = s.masked_fill(torch.arange(j0, j1)[None, :] > torch.arange(m)[:, None] + n - m, -math.inf)
            top = s.amax(-1)
            base = torch.where(torch.isinf(top), torch.zeros_like(top), top)
            p = torch.exp(s - base[..., None])
            l = torch.sum(p, dim=-1)
            o = (p @ V[..., j0:j1, :]) / torch.where(l > 0, l, torch.ones_like(l))[..., None]
            state, level = (top, l, o), 0
            while stack and stack[-1][0] == level:
                state, level = _merge(stack.pop()[1], state), level + 1
            stack.append((level, state))
        state = stack.pop()[1]
        while stack:
            state = _merge(stack.pop()[1], state)
        top, l, O = state
        L = top + torch.log(l)
        ctx.save_for_backward(Q, K, V, O, L)
        ctx.causal, ctx.block_size = causal, block_size
        return O

    @staticmethod
    def backward(ctx, dO):
        Q, K, V, O, L = ctx.saved_tensors
        m, n, size = Q.shape[-2], K.shape[-2], ctx.block_size
        scale = 1 / math.sqrt(Q.shape[-1])
        D = torch.zeros_like(L)
        for i in _blocks(m, size):  # first sweep: D = rowsum(P * dP)
            for j in _blocks(n, size):
                p = _weights(Q, K, L, i, j, ctx.causal, m, n)
                dp = dO[..., i[0]:i[1], :] @ V[..., j[0]:j[1], :].transpose(-2, -1)
                D[..., i[0]:i[1]] += torch.einsum("...ij,...ij->...i", p, dp)
        dQ, dK, dV = torch.zeros_like(Q), torch.zeros_like(K), torch.zeros_like(V)
        for i in _blocks(m, size):
            for j in _blocks(n, size):
                p = _weights(Q, K, L, i, j, ctx.causal, m, n)
                do = dO[..., i[0]:i[1], :]
                dV[..., j[0]:j[1], :] += p.transpose(-2, -1) @ do
                ds = p * (do @ V[..., j[0]:j[1], :].transpose(-2, -1) - D[..., i[0]:i[1], None])
                dQ[..., i[0]:i[1], :] += ds @ K[..., j[0]:j[1], :] * scale
                dK[..., j[0]:j[1], :] += ds.transpose(-2, -1) @ Q[..., i[0]:i[1], :] * scale
        return dQ, dK, dV, None, None


def flash_attention(Q, K, V, causal=False, block_size=64):
    return FlashAttention.apply(Q, K, V, causal, block_size)
