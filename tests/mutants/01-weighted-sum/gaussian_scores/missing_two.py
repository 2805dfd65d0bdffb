# Forgets the 2 in 2 * bandwidth ** 2.
def gaussian_scores(queries, keys, bandwidth):
    diff = np.asarray(queries, dtype=float)[:, None, :] - np.asarray(keys, dtype=float)[None, :, :]
    return -np.sum(diff**2, axis=-1) / bandwidth**2
