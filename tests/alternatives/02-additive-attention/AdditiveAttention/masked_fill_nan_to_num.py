# Masks with -inf via masked_fill and turns the nan of empty rows into zeros with nan_to_num; bmm for the output.
class AdditiveAttention(nn.Module):
    """Additive attention: (B, m, d_q), (B, n, d_k), (B, n, d_v) -> ((B, m, d_v), (B, m, n))."""

    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        q = self.W_q(queries)[:, :, None, :]  # (B, m, 1, h)
        k = self.W_k(keys)[:, None, :, :]  # (B, 1, n, h)
        scores = self.w_v(torch.tanh(q + k))[..., 0]  # (B, m, n)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
        return torch.bmm(weights, values), weights
