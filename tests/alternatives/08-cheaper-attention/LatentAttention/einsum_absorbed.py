# Einsums throughout; the absorbed form keeps up_k's bias term q_h . b_h (softmax would ignore it) and adds up_v's bias.
class LatentAttention(nn.Module):
    def __init__(self, d_model, n_heads, d_latent, bias=False):
        super().__init__()
        self.H, self.dh = n_heads, d_model // n_heads
        self.q = nn.Linear(d_model, d_model, bias=bias)
        self.down = nn.Linear(d_model, d_latent, bias=bias)
        self.up_k = nn.Linear(d_latent, d_model, bias=bias)
        self.up_v = nn.Linear(d_latent, d_model, bias=bias)
        self.out = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x, cache=None, absorbed=False):
        B, t, _ = x.shape
        c = self.down(x)
        C = c if cache is None else torch.cat([cache[0], c], dim=1)
        T = C.shape[1]
        q = self.q(x).view(B, t, self.H, self.dh)
        visible = torch.arange(T)[None, :] - torch.arange(t)[:, None] <= T - t
        if absorbed:
            W_k = self.up_k.weight.view(self.H, self.dh, -1)
            q_latent = torch.einsum("bthd,hdl->bhtl", q, W_k)  # first: never a (T, d_head) product
            scores = torch.einsum("bhtl,bsl->bhts", q_latent, C)
            if self.up_k.bias is not None:
                scores = scores + torch.einsum("bthd,hd->bht", q, self.up_k.bias.view(self.H, self.dh))[..., None]
        else:
            k = self.up_k(C).view(B, T, self.H, self.dh)
            scores = torch.einsum("bthd,bshd->bhts", q, k)
        weights = torch.softmax((scores / math.sqrt(self.dh)).masked_fill(~visible, float("-inf")), dim=-1)
        if absorbed:
            mixed = torch.einsum("bhts,bsl->bhtl", weights, C)
            o = torch.einsum("bhtl,hdl->bthd", mixed, self.up_v.weight.view(self.H, self.dh, -1))
            if self.up_v.bias is not None:
                o = o + self.up_v.bias.view(self.H, self.dh)
        else:
            o = torch.einsum("bhts,bshd->bthd", weights, self.up_v(C).view(B, T, self.H, self.dh))
        return self.out(o.reshape(B, t, -1)), (C,)
