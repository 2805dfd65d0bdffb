# Multiplies each pair, read as a complex number x_2i + i x_2i+1, by exp(i * position * theta_i) (torch complex tensors).
def apply_rope(x, positions=None, base=10000.0):
    """RoPE via complex multiplication: x (..., n, d) -> same shape and dtype."""
    n, d = x.shape[-2:]
    if positions is None:
        positions = torch.arange(n)
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = positions.to(torch.float64)[:, None] * theta
    rotation = torch.polar(torch.ones_like(angles), angles)
    pairs = torch.view_as_complex(x.to(torch.float64).reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(pairs * rotation).reshape(x.shape).to(x.dtype)
