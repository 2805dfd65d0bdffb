# Loops over the feature pairs, one rotation per pair, and concatenates them again.
def apply_rope(x, positions=None, base=10000.0):
    d = x.shape[-1]
    if positions is None:
        positions = list(range(x.shape[-2]))
    p = torch.tensor([float(v) for v in positions], dtype=torch.float64)
    columns = []
    for i in range(d // 2):
        angle = p * base ** (-2 * i / d)
        c, s = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
        a, b = x[..., 2 * i], x[..., 2 * i + 1]
        columns += [a * c - b * s, a * s + b * c]
    return torch.stack(columns, dim=-1)
