# An einsum over (kv head, query head in its group), with the mask built from absolute positions.
class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads, bias=False):
        super().__init__()
        d_head = d_model // n_heads
        self.shape = (n_kv_heads, n_heads // n_kv_heads, d_head)
        self.out = nn.Linear(d_model, d_model, bias=bias)
        self.v = nn.Linear(d_model, n_kv_heads * d_head, bias=bias)
        self.k = nn.Linear(d_model, n_kv_heads * d_head, bias=bias)
        self.q = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x, cache=None):
        n_kv, group, d_head = self.shape
        B, t, _ = x.shape
        q = self.q(x).reshape(B, t, n_kv, group, d_head)
        k = self.k(x).reshape(B, t, n_kv, d_head).transpose(1, 2)
        v = self.v(x).reshape(B, t, n_kv, d_head).transpose(1, 2)
        if cache is not None:
            old_k, old_v = cache
            k, v = torch.cat([old_k, k], 2), torch.cat([old_v, v], 2)
        T = k.shape[2]
        scores = torch.einsum("btgrd,bgsd->bgrts", q, k) * d_head ** -0.5
        query_position = torch.arange(T - t, T).view(t, 1)
        key_position = torch.arange(T).view(1, T)
        scores = torch.where(key_position <= query_position, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
        weights = scores.softmax(-1)
        o = torch.einsum("bgrts,bgsd->btgrd", weights, v).reshape(B, t, -1)
        return self.out(o), (k, v)
