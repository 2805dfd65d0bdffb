# Absorbed: q's and up_k's weights folded into one (d_model -> d_latent) map per head, up_v's and out's into one
# (d_latent -> d_model) map per head; the naive form calls scaled_dot_product_attention.
class LatentAttention(nn.Module):
    def __init__(self, d_model, n_heads, d_latent, bias=False):
        super().__init__()
        self.n_heads = n_heads
        self.down = nn.Linear(d_model, d_latent, bias=bias)
        self.up_k = nn.Linear(d_latent, d_model, bias=bias)
        self.up_v = nn.Linear(d_latent, d_model, bias=bias)
        self.q = nn.Linear(d_model, d_model, bias=bias)
        self.out = nn.Linear(d_model, d_model, bias=bias)

    def _heads(self, y):
        return y.unflatten(-1, (self.n_heads, -1)).transpose(1, 2)

    def forward(self, x, cache=None, absorbed=False):
        latents = self.down(x)
        if cache is not None:
            latents = torch.cat([cache[0], latents], dim=1)
        t, T, d_model = x.shape[1], latents.shape[1], x.shape[2]
        H = self.n_heads
        d_head = d_model // H
        mask = torch.ones(t, T, dtype=torch.bool).tril(T - t)
        if not absorbed:
            o = F.scaled_dot_product_attention(self._heads(self.q(x)), self._heads(self.up_k(latents)),
                                               self._heads(self.up_v(latents)), attn_mask=mask)
            return self.out(o.transpose(1, 2).flatten(2)), (latents,)
        W_q = self.q.weight.view(H, d_head, d_model)
        W_k = self.up_k.weight.view(H, d_head, -1)
        to_latent = W_q.transpose(1, 2) @ W_k  # (H, d_model, d_latent): x -> the query in the latent space
        q_latent = torch.einsum("btm,hml->bhtl", x, to_latent)
        if self.q.bias is not None:
            q_latent = q_latent + (self.q.bias.view(H, 1, d_head) @ W_k)[None]
        scores = q_latent @ latents.transpose(1, 2)[:, None] / math.sqrt(d_head)
        weights = scores.masked_fill(~mask, -math.inf).softmax(dim=-1)
        mixed = weights @ latents[:, None]  # (B, H, t, d_latent)
        W_v = self.up_v.weight.view(H, d_head, -1)
        W_o = self.out.weight.view(d_model, H, d_head).transpose(0, 1)  # (H, d_model, d_head)
        from_latent = W_v.transpose(1, 2) @ W_o.transpose(1, 2)  # (H, d_latent, d_model)
        y = torch.einsum("bhtl,hlm->btm", mixed, from_latent)
        if self.up_v.bias is not None:
            y = y + self.out.weight @ self.up_v.bias
        if self.out.bias is not None:
            y = y + self.out.bias
        return y, (latents,)
