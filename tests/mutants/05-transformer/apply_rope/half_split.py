# Pairs feature i with feature i + d/2 (the "rotate half" layout of some libraries) instead of interleaved pairs.
def apply_rope(x, positions=None, base=10000.0):
    n, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(n, device=x.device)
    inverse_frequency = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = torch.as_tensor(positions, dtype=torch.float64)[:, None] * inverse_frequency
    cos, sin = torch.cos(angles).to(x.dtype), torch.sin(angles).to(x.dtype)
    first, second = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)
