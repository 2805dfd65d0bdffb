# Counts positions from 1.
def sinusoidal_positional_encoding(n, d):
    positions = np.arange(1, n + 1)[:, None]
    even = np.arange(0, d, 2)
    angles = positions / 10000.0 ** (even / d)
    pe = np.zeros((n, d))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d // 2])
    return pe
