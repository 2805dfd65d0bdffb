# Scores with einsum against w_v.weight, masking with torch.where and zeroing empty rows afterwards.
class AdditiveAttention(nn.Module):
    """Additive attention: (B, m, d_q), (B, n, d_k), (B, n, d_v) -> ((B, m, d_v), (B, m, n))."""

    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        hidden = torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))
        scores = torch.einsum("bmnh,h->bmn", hidden, self.w_v.weight[0])
        if mask is None:
            weights = torch.softmax(scores, dim=-1)
        else:
            mask = torch.as_tensor(mask, dtype=torch.bool).expand_as(scores)
            scores = torch.where(mask, scores, torch.full_like(scores, -1e9))
            weights = torch.where(mask.any(-1, keepdim=True), torch.softmax(scores, dim=-1), torch.zeros_like(scores))
        return torch.einsum("bmn,bnd->bmd", weights, values), weights
