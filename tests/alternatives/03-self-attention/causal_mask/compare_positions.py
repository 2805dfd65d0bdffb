# Compares key and query positions with broadcasting.
def causal_mask(n):
    positions = np.arange(n)
    return positions[None, :] <= positions[:, None]
