# Expands the kv heads without copying (expand, then reshape) and runs a loop over the heads for the softmax.
class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads, bias=False):
        super().__init__()
        assert d_model % n_heads == 0 and n_heads % n_kv_heads == 0
        self.h, self.g = n_heads, n_kv_heads
        self.dh = d_model // n_heads
        self.q = nn.Linear(d_model, d_model, bias=bias)
        self.k = nn.Linear(d_model, self.g * self.dh, bias=bias)
        self.v = nn.Linear(d_model, self.g * self.dh, bias=bias)
        self.out = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x, cache=None):
        B, t, D = x.shape
        K_new = self.k(x).view(B, t, self.g, self.dh).transpose(1, 2)
        V_new = self.v(x).view(B, t, self.g, self.dh).transpose(1, 2)
        K = K_new if cache is None else torch.cat([cache[0], K_new], dim=2)
        V = V_new if cache is None else torch.cat([cache[1], V_new], dim=2)
        T = K.shape[2]
        group = self.h // self.g
        K_all = K[:, :, None].expand(B, self.g, group, T, self.dh).reshape(B, self.h, T, self.dh)
        V_all = V[:, :, None].expand(B, self.g, group, T, self.dh).reshape(B, self.h, T, self.dh)
        Q = self.q(x).view(B, t, self.h, self.dh)
        heads = []
        for h in range(self.h):
            s = Q[:, :, h] @ K_all[:, h].transpose(1, 2) / math.sqrt(self.dh)
            for i in range(t):
                s[:, i, T - t + i + 1:] = -math.inf
            heads.append(torch.softmax(s, dim=-1) @ V_all[:, h])
        return self.out(torch.cat(heads, dim=-1)), (K, V)
