# Masks with -inf and zeroes nan weights afterwards: the weights look right, the gradients are nan.
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
            weights = scores.softmax(dim=-1)
        else:
            mask = torch.as_tensor(mask, dtype=torch.bool)
            weights = torch.nan_to_num(scores.masked_fill(~mask, float("-inf")).softmax(dim=-1))
        return weights @ values, weights
