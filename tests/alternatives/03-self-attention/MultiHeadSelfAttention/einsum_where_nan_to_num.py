# Splits heads with unflatten, scores with einsum, masks with torch.where(-inf) and repairs empty rows with nan_to_num.
class MultiHeadSelfAttention(nn.Module):
    """Multi-head self-attention: x (B, T, d_model) -> (output (B, T, d_model), weights (B, h, T, T))."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.out = nn.Linear(d_model, d_model)  # created first: other initial values, same contract
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.num_heads = num_heads

    def forward(self, x, mask=None):
        q, k, v = (t.unflatten(-1, (self.num_heads, -1)) for t in self.qkv(x).chunk(3, dim=-1))  # (B, T, h, d)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
        if mask is not None:
            mask = mask if mask.dim() == 2 else mask.unsqueeze(1)
            scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
        weights = torch.nan_to_num(scores.softmax(-1), nan=0.0)
        merged = torch.einsum("bhqk,bkhd->bqhd", weights, v).flatten(-2)
        return self.out(merged), weights
