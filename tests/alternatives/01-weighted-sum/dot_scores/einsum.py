# einsum over the feature axis.
def dot_scores(queries, keys):
    return np.einsum("md,nd->mn", queries, keys)
