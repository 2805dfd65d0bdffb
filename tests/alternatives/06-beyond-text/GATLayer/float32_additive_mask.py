# Computes the attention in float32 with an additive mask (-1e9 off the graph) and returns float32.
class GATLayer(nn.Module):
    def __init__(self, in_dim, out_dim, num_heads=1, concat=True):
        super().__init__()
        self.W = nn.Linear(in_dim, num_heads * out_dim, bias=False)
        self.a = nn.Parameter(torch.randn(num_heads, 2 * out_dim) / out_dim)
        self.h, self.d, self.concat = num_heads, out_dim, concat

    def forward(self, x, adjacency):
        n = x.shape[0]
        z = self.W(x).float().view(n, self.h, self.d).transpose(0, 1)  # (H, N, out), float32
        a = self.a.float()
        e = (z @ a[:, :self.d, None]) + (z @ a[:, self.d:, None]).transpose(1, 2)  # (H, N, N)
        e = F.leaky_relu(e, 0.2)
        keep = adjacency.bool() | torch.eye(n, dtype=torch.bool)
        alpha = torch.softmax(e + (~keep).float() * -1e9, dim=-1)
        out = alpha @ z
        return out.transpose(0, 1).reshape(n, -1) if self.concat else out.mean(0)
