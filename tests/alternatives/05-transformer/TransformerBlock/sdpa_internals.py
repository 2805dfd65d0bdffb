# Computes attention itself with F.scaled_dot_product_attention on self.attn's qkv and out parameters.
class TransformerBlock(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__()
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))
        self.heads, self.norm_first = num_heads, norm_first

    def attend(self, x, mask):
        B, T, D = x.shape
        q, k, v = self.attn.qkv(x).split(D, dim=-1)
        q, k, v = [t.view(B, T, self.heads, D // self.heads).transpose(1, 2) for t in (q, k, v)]
        if mask is not None:
            mask = torch.as_tensor(mask, dtype=torch.bool)
            mask = mask if mask.dim() == 2 else mask[:, None]
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.attn.out(y.transpose(1, 2).reshape(B, T, D))

    def forward(self, x, mask=None):
        if not self.norm_first:
            x = self.norm1(x + self.attend(x, mask))
            x = self.norm2(x + self.ff(x))
            return x
        x = x + self.attend(self.norm1(x), mask)
        x = x + self.ff(self.norm2(x))
        return x
