# Pools each set of the batch on its own: keeps its real elements, runs self.attn without a mask, zeros if none.
class AttentionPooling(nn.Module):
    def __init__(self, d_model, num_heads, num_seeds=1):
        super().__init__()
        self.seeds = nn.Parameter(0.1 * torch.randn(1, num_seeds, d_model))
        self.attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True)

    def forward(self, x, present=None):
        outputs = []
        for b in range(x.shape[0]):
            real = x[b] if present is None else x[b][present[b]]
            if len(real) == 0:
                outputs.append(torch.zeros(self.seeds.shape[1:], dtype=x.dtype))
            else:
                outputs.append(self.attn(self.seeds, real[None], real[None])[0][0])
        return torch.stack(outputs)
