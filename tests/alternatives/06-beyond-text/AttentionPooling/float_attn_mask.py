# Passes the padding as a float attn_mask (-inf per head) instead of key_padding_mask; empty sets zeroed by where.
class AttentionPooling(nn.Module):
    def __init__(self, d_model, num_heads, num_seeds=1):
        super().__init__()
        self.seeds = nn.Parameter(torch.rand(1, num_seeds, d_model) - 0.5)
        self.attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True)

    def forward(self, x, present=None):
        b, n, _ = x.shape
        k = self.seeds.shape[1]
        seeds = self.seeds.repeat(b, 1, 1)
        if present is None:
            present = torch.ones(b, n, dtype=torch.bool)
        empty = ~present.any(dim=1)
        visible = present | empty[:, None]  # an empty set looks at everything; its output is replaced below
        mask = torch.zeros(b, n, dtype=x.dtype).masked_fill(~visible, float("-inf"))
        mask = mask[:, None, :].expand(b, k, n).repeat_interleave(self.attn.num_heads, dim=0)  # (B * heads, k, n)
        out, _ = self.attn(seeds, x, x, attn_mask=mask, need_weights=False)
        return torch.where(empty[:, None, None], torch.zeros_like(out), out)
