# Puts all sines in the first half and all cosines in the second (a common variant, but not this formula).
def sinusoidal_positional_encoding(n, d):
    positions = np.arange(n)[:, None]
    even = np.arange(0, d, 2)
    angles = positions / 10000.0 ** (even / d)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)[:, :d]
