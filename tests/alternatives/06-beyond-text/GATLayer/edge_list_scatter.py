# Works on an edge list, as graph libraries do: scores per edge, softmax per receiving node with scatter_reduce/index_add.
class GATLayer(nn.Module):
    def __init__(self, in_dim, out_dim, num_heads=1, concat=True):
        super().__init__()
        self.num_heads, self.out_dim, self.concat = num_heads, out_dim, concat
        self.W = nn.Linear(in_dim, num_heads * out_dim, bias=False)
        self.a = nn.Parameter(torch.empty(num_heads, 2 * out_dim).uniform_(-0.3, 0.3))

    def forward(self, x, adjacency):
        n = x.shape[0]
        z = self.W(x).view(n, self.num_heads, self.out_dim)
        with_loops = adjacency.bool() | torch.eye(n, dtype=torch.bool)
        target, source = with_loops.nonzero(as_tuple=True)  # edge source -> target: target attends to source
        left = (z * self.a[:, :self.out_dim]).sum(-1)
        right = (z * self.a[:, self.out_dim:]).sum(-1)
        e = F.leaky_relu(left[target] + right[source], 0.2)  # (E, H)
        top = torch.full((n, self.num_heads), float("-inf"), dtype=e.dtype).scatter_reduce(
            0, target[:, None].expand_as(e), e, reduce="amax")
        w = torch.exp(e - top[target])
        total = torch.zeros(n, self.num_heads, dtype=e.dtype).index_add(0, target, w)
        alpha = w / total[target]
        out = torch.zeros(n, self.num_heads, self.out_dim, dtype=z.dtype).index_add(0, target, alpha[..., None] * z[source])
        return out.reshape(n, -1) if self.concat else out.mean(1)
