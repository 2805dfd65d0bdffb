# Scores as in the paper, a^T [W x_i || W x_j] on every concatenated pair; mask by torch.where, self-loops by fill_diagonal_.
class GATLayer(nn.Module):
    def __init__(self, in_dim, out_dim, num_heads=1, concat=True):
        super().__init__()
        self.W = nn.Linear(in_dim, num_heads * out_dim, bias=False)
        self.a = nn.Parameter(torch.zeros(num_heads, 2 * out_dim))
        nn.init.normal_(self.a, std=0.1)
        self.num_heads, self.out_dim, self.concat = num_heads, out_dim, concat

    def forward(self, x, adjacency):
        n = x.shape[0]
        z = self.W(x).reshape(n, self.num_heads, self.out_dim).permute(1, 0, 2)  # (H, N, out)
        pairs = torch.cat([z[:, :, None, :].expand(-1, n, n, -1), z[:, None, :, :].expand(-1, n, n, -1)], dim=-1)
        e = F.leaky_relu(torch.einsum("hijc,hc->hij", pairs, self.a), negative_slope=0.2)  # (H, N, N)
        allowed = adjacency.clone().bool()
        allowed.fill_diagonal_(True)
        e = torch.where(allowed, e, torch.tensor(float("-inf"), dtype=e.dtype))
        out = torch.softmax(e, dim=-1) @ z  # (H, N, out)
        if self.concat:
            return out.permute(1, 0, 2).reshape(n, -1)
        return out.sum(dim=0) / self.num_heads
