# Uses the distance, not the squared distance.
def gaussian_scores(queries, keys, bandwidth):
    diff = np.asarray(queries, dtype=float)[:, None, :] - np.asarray(keys, dtype=float)[None, :, :]
    return -np.sqrt(np.sum(diff**2, axis=-1)) / (2.0 * bandwidth**2)
