# Repeats each kv head for its group with repeat_interleave, then calls PyTorch's scaled_dot_product_attention with
# a boolean mask aligned to the last key.
class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads, bias=False):
        super().__init__()
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.d_head = d_model // n_heads
        self.q = nn.Linear(d_model, d_model, bias=bias)
        self.k = nn.Linear(d_model, n_kv_heads * self.d_head, bias=bias)
        self.v = nn.Linear(d_model, n_kv_heads * self.d_head, bias=bias)
        self.out = nn.Linear(d_model, d_model, bias=bias)

    def _split(self, y, heads):
        return y.unflatten(-1, (heads, self.d_head)).permute(0, 2, 1, 3)

    def forward(self, x, cache=None):
        q = self._split(self.q(x), self.n_heads)
        k = self._split(self.k(x), self.n_kv_heads)
        v = self._split(self.v(x), self.n_kv_heads)
        if cache is not None:
            k = torch.cat((cache[0], k), dim=-2)
            v = torch.cat((cache[1], v), dim=-2)
        t, T = q.shape[-2], k.shape[-2]
        mask = torch.ones(t, T, dtype=torch.bool).tril(diagonal=T - t)
        repeat = self.n_heads // self.n_kv_heads
        o = F.scaled_dot_product_attention(q, k.repeat_interleave(repeat, dim=1), v.repeat_interleave(repeat, dim=1),
                                           attn_mask=mask)
        return self.out(o.permute(0, 2, 1, 3).flatten(-2)), (k, v)
