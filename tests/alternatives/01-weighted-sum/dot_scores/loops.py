# Two Python loops over queries and keys, np.dot for each pair.
def dot_scores(queries, keys):
    scores = np.zeros((len(queries), len(keys)))
    for i, q in enumerate(queries):
        for j, k in enumerate(keys):
            scores[i, j] = np.dot(q, k)
    return scores
