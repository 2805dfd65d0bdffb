# Adds each node's own term on top of the adjacency's: a self-loop already in the adjacency is counted twice.
class GATLayer(nn.Module):
    def __init__(self, in_dim, out_dim, num_heads=1, concat=True):
        super().__init__()
        self.num_heads, self.out_dim, self.concat = num_heads, out_dim, concat
        self.W = nn.Linear(in_dim, num_heads * out_dim, bias=False)
        self.a = nn.Parameter(torch.empty(num_heads, 2 * out_dim))
        nn.init.xavier_uniform_(self.a)

    def forward(self, x, adjacency):
        n = x.shape[0]
        z = self.W(x).view(n, self.num_heads, self.out_dim)
        left = (z * self.a[:, :self.out_dim]).sum(dim=-1)
        right = (z * self.a[:, self.out_dim:]).sum(dim=-1)
        scores = F.leaky_relu(left[:, None, :] + right[None, :, :], negative_slope=0.2)  # (N, N, H)
        counts = torch.as_tensor(adjacency, dtype=scores.dtype) + torch.eye(n, dtype=scores.dtype)  # 2 on a self-loop
        shift = scores.amax(dim=1, keepdim=True)
        weights = torch.exp(scores - shift) * counts[:, :, None]
        alpha = weights / weights.sum(dim=1, keepdim=True)
        out = torch.einsum("ijh,jhd->ihd", alpha, z)
        return out.reshape(n, -1) if self.concat else out.mean(dim=1)
