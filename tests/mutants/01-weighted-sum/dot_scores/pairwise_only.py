# Pairs query i with key i only, then repeats: not every query against every key.
def dot_scores(queries, keys):
    queries, keys = np.asarray(queries, dtype=float), np.asarray(keys, dtype=float)
    m, n = len(queries), len(keys)
    diag = np.array([queries[i % m] @ keys[i % n] for i in range(max(m, n))])
    return np.resize(diag, (m, n))
