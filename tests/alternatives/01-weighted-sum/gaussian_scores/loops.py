# Loops over pairs with np.linalg.norm.
def gaussian_scores(queries, keys, bandwidth):
    out = np.empty((len(queries), len(keys)))
    for i in range(len(queries)):
        for j in range(len(keys)):
            out[i, j] = -np.linalg.norm(np.subtract(queries[i], keys[j])) ** 2 / (2 * bandwidth * bandwidth)
    return out
