# Computes the angles in PyTorch's default float32, whatever the dtype of x, and rotates with slices written in place.
def apply_rope(x, positions=None, base=10000.0):
    n, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(n)
    theta = base ** (-torch.arange(0, d, 2) / d)  # float32
    angle = positions[:, None] * theta  # float32 (n, d/2)
    cos, sin = torch.cos(angle), torch.sin(angle)
    out = x.clone()
    out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
    out[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
    return out
