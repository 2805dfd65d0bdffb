"""The additive attention module used by the chapter 2 page of the book.

It lives here, not on the page, because writing it is exercise 2: the book
shows what it does, not its code.
"""
import torch
from torch import nn


class AdditiveAttention(nn.Module):
    """Bahdanau attention: queries (B, m, d_q), keys (B, n, d_k), values (B, n, d_v), mask (B, 1 or m, n).

    Returns (output (B, m, d_v), weights (B, m, n)); mask True = may attend.
    """

    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        features = self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1)
        logits = self.w_v(torch.tanh(features)).squeeze(-1)
        if mask is not None:
            allowed = mask.bool().expand_as(logits)
            any_allowed = allowed.any(-1, keepdim=True)
            logits = torch.where(allowed, logits, torch.tensor(float("-inf"), dtype=logits.dtype))
            logits = torch.where(any_allowed, logits, torch.zeros_like(logits))
            alpha = torch.softmax(logits, -1) * any_allowed
        else:
            alpha = torch.softmax(logits, -1)
        return torch.bmm(alpha, values), alpha
