# Splits heads by striding (feature f goes to head f % h) instead of consecutive blocks.
class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_head = num_heads, d_model // num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        B, T, d_model = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.reshape(B, T, self.d_head, self.num_heads).permute(0, 3, 1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            mask = torch.as_tensor(mask, dtype=torch.bool)
            mask = mask[:, None] if mask.dim() == 3 else mask
            has_key = mask.any(dim=-1, keepdim=True)
            scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
            weights = torch.softmax(scores, dim=-1) * has_key
        else:
            weights = torch.softmax(scores, dim=-1)
        merged = (weights @ v).transpose(1, 2).reshape(B, T, d_model)
        return self.out(merged), weights
