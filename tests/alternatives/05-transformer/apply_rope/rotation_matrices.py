# Builds one 2x2 rotation matrix per position and pair and applies them with einsum (in numpy, back to torch).
def apply_rope(x, positions=None, base=10000.0):
    d = x.shape[-1]
    n = x.shape[-2]
    pos = np.arange(n) if positions is None else np.asarray(positions)
    angle = pos[:, None] * base ** (-np.arange(d // 2) * 2.0 / d)  # (n, d/2)
    c, s = np.cos(angle), np.sin(angle)
    R = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)  # (n, d/2, 2, 2)
    pairs = x.detach().cpu().numpy().reshape(*x.shape[:-1], d // 2, 2)
    out = np.einsum("npij,...npj->...npi", R, pairs)
    return torch.from_numpy(out.reshape(x.shape)).to(x.dtype)
