# Fills masked scores with -1e9: a fully masked query gets uniform weights over the padding instead of zeros.
class AdditiveAttention(nn.Module):
    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        hidden = torch.tanh(self.W_q(queries)[:, :, None, :] + self.W_k(keys)[:, None, :, :])
        scores = self.w_v(hidden).squeeze(-1)
        if mask is not None:
            scores = scores.masked_fill(~torch.as_tensor(mask, dtype=torch.bool), -1e9)
        weights = scores.softmax(dim=-1)
        return weights @ values, weights
