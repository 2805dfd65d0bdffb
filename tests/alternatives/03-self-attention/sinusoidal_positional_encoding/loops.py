# Two Python loops and the math module, column by column.
def sinusoidal_positional_encoding(n, d):
    pe = np.zeros((n, d))
    for p in range(n):
        for col in range(d):
            angle = p / 10000 ** ((col - col % 2) / d)
            pe[p, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    return pe
