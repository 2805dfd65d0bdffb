# Loops over the batch, masks with -inf and turns the nan of empty rows into zeros with nan_to_num.
class AdditiveAttention(nn.Module):
    """Additive attention: (B, m, d_q), (B, n, d_k), (B, n, d_v) -> ((B, m, d_v), (B, m, n))."""

    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        outputs, all_weights = [], []
        for b in range(queries.shape[0]):
            q, k = self.W_q(queries[b]), self.W_k(keys[b])  # (m, h), (n, h)
            scores = self.w_v(torch.tanh(q[:, None, :] + k[None, :, :]))[..., 0]  # (m, n)
            if mask is not None:
                scores = scores.masked_fill(~mask[b].expand_as(scores), float("-inf"))
            weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
            outputs.append(weights @ values[b])
            all_weights.append(weights)
        return torch.stack(outputs), torch.stack(all_weights)
