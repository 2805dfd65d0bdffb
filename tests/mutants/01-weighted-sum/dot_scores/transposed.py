# Keys times queries: the (n, m) transpose of the score matrix.
def dot_scores(queries, keys):
    return np.asarray(keys, dtype=float) @ np.asarray(queries, dtype=float).T
