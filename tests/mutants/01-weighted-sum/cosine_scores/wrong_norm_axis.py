# Takes the norm over axis 0 (each feature across vectors) instead of each vector.
def cosine_scores(queries, keys):
    def unit(x):
        x = np.asarray(x, dtype=float)
        norm = np.linalg.norm(x, axis=0, keepdims=True)
        return np.divide(x, norm, out=np.zeros_like(x), where=norm > 0)
    return unit(queries) @ unit(keys).T
