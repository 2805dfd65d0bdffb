# Normalises the queries but forgets the keys.
def cosine_scores(queries, keys):
    queries = np.asarray(queries, dtype=float)
    norm = np.linalg.norm(queries, axis=-1, keepdims=True)
    q = np.divide(queries, norm, out=np.zeros_like(queries), where=norm > 0)
    return q @ np.asarray(keys, dtype=float).T
