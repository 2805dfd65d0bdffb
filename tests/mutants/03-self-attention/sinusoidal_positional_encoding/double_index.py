# Uses 2 * (column index) in the exponent, so frequencies fall twice as fast.
def sinusoidal_positional_encoding(n, d):
    positions = np.arange(n)[:, None]
    even = np.arange(0, d, 2)
    angles = positions / 10000.0 ** (2 * even / d)
    pe = np.zeros((n, d))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d // 2])
    return pe
