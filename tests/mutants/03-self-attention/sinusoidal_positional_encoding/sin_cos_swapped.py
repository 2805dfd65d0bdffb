# Cosines in the even columns and sines in the odd ones.
def sinusoidal_positional_encoding(n, d):
    positions = np.arange(n)[:, None]
    even = np.arange(0, d, 2)
    angles = positions / 10000.0 ** (even / d)
    pe = np.zeros((n, d))
    pe[:, 0::2] = np.cos(angles)
    pe[:, 1::2] = np.sin(angles[:, : d // 2])
    return pe
