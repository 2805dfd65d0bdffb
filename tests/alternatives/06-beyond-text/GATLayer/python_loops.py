# Loops over the nodes: for each, the scores of itself and its neighbours, their softmax and the weighted sum.
class GATLayer(nn.Module):
    def __init__(self, in_dim, out_dim, num_heads=1, concat=True):
        super().__init__()
        self.heads, self.width, self.concat = num_heads, out_dim, concat
        self.a = nn.Parameter(torch.randn(num_heads, 2 * out_dim) * 0.1)
        self.W = nn.Linear(in_dim, num_heads * out_dim, bias=False)

    def forward(self, x, adjacency):
        n = len(x)
        z = self.W(x).view(n, self.heads, self.width)
        rows = []
        for i in range(n):
            sources = [j for j in range(n) if j == i or bool(adjacency[i, j])]
            zj = z[sources]  # (k, H, out)
            e = (z[i] * self.a[:, :self.width]).sum(-1) + (zj * self.a[:, self.width:]).sum(-1)  # (k, H)
            alpha = torch.softmax(F.leaky_relu(e, 0.2), dim=0)
            rows.append((alpha[..., None] * zj).sum(0))  # (H, out)
        out = torch.stack(rows)
        return out.flatten(1) if self.concat else out.mean(1)
