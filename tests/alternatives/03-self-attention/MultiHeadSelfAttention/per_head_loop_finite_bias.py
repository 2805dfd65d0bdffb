# Slices qkv.weight per head with F.linear, loops over heads, masks with an added finite -1e9 bias.
import torch.nn.functional as F


class MultiHeadSelfAttention(nn.Module):
    """Multi-head self-attention: x (B, T, d_model) -> (output (B, T, d_model), weights (B, h, T, T))."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        d_model = x.shape[-1]
        d_head = d_model // self.h
        bias = torch.zeros(x.shape[1], x.shape[1], dtype=x.dtype)
        if mask is not None:
            bias = torch.zeros(mask.shape, dtype=x.dtype).masked_fill(~mask, -1e9)
            if bias.dim() == 3:
                bias = bias[:, None]
        outputs, all_weights = [], []
        for head in range(self.h):
            rows = [part * d_model + head * d_head + i for part in range(3) for i in range(d_head)]
            q, k, v = F.linear(x, self.qkv.weight[rows], self.qkv.bias[rows]).split(d_head, dim=-1)
            scores = q @ k.transpose(1, 2) / d_head**0.5 + (bias[:, 0] if bias.dim() == 4 else bias)
            weights = torch.softmax(scores, dim=-1)
            if mask is not None:
                weights = weights * mask.any(-1, keepdim=True)
            outputs.append(weights @ v)
            all_weights.append(weights)
        return self.out(torch.cat(outputs, dim=-1)), torch.stack(all_weights, dim=1)
