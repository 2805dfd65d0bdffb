# Divides everywhere and picks 0 with np.where where a norm is 0 (NumPy warns about the 0 / 0 it discards).
def cosine_scores(queries, keys):
    queries, keys = np.asarray(queries, dtype=float), np.asarray(keys, dtype=float)
    denominator = np.linalg.norm(queries, axis=1)[:, None] * np.linalg.norm(keys, axis=1)[None, :]
    return np.where(denominator > 0, (queries @ keys.T) / denominator, 0.0)
