# Adds the four d_model x d_model projections (q, k, v, output) to attention's side.
# replace: mixing = count_flops(lambda: torch.softmax(q @ k.transpose(-2, -1) / 4.0, dim=-1) @ v)
# with: mixing = count_flops(lambda: torch.softmax(q @ k.transpose(-2, -1) / 4.0, dim=-1) @ v) + 4 * 2 * n * 64 * 64
