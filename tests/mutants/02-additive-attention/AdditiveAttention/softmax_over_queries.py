# Normalises over the queries (dim 1) instead of the keys.
class AdditiveAttention(nn.Module):
    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        hidden = torch.tanh(self.W_q(queries)[:, :, None, :] + self.W_k(keys)[:, None, :, :])
        scores = self.w_v(hidden).squeeze(-1)
        if mask is None:
            weights = scores.softmax(dim=1)
        else:
            mask = torch.as_tensor(mask, dtype=torch.bool)
            has_key = mask.any(dim=-1, keepdim=True)
            scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
            weights = scores.softmax(dim=1) * has_key
        return weights @ values, weights
