# NumPy's lower-triangular np.tri.
def causal_mask(n):
    return np.tri(n, dtype=bool)
