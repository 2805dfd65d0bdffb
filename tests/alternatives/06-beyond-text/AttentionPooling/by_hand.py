# Writes the seeds' multi-head attention out by hand from self.attn's parameters, with masked_fill and nan_to_num.
class AttentionPooling(nn.Module):
    def __init__(self, d_model, num_heads, num_seeds=1):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True)
        self.seeds = nn.Parameter(torch.empty(1, num_seeds, d_model))
        nn.init.xavier_uniform_(self.seeds)

    def forward(self, x, present=None):
        b, n, d = x.shape
        h = self.attn.num_heads
        if present is None:
            present = torch.ones(b, n, dtype=torch.bool)
        w_q, w_k, w_v = self.attn.in_proj_weight.chunk(3)
        b_q, b_k, b_v = self.attn.in_proj_bias.chunk(3)
        q = (self.seeds @ w_q.T + b_q).view(1, -1, h, d // h).transpose(1, 2)  # (1, h, k, d/h)
        k = (x @ w_k.T + b_k).view(b, n, h, d // h).transpose(1, 2)  # (B, h, n, d/h)
        v = (x @ w_v.T + b_v).view(b, n, h, d // h).transpose(1, 2)
        scores = q @ k.transpose(-1, -2) / (d // h) ** 0.5
        scores = scores.masked_fill(~present[:, None, None, :], float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)  # an empty set: 0 / 0 -> 0
        mixed = (weights @ v).transpose(1, 2).reshape(b, -1, d)
        out = self.attn.out_proj(mixed)
        return out * present.any(dim=1)[:, None, None]  # an empty set: zeros, not the output bias
