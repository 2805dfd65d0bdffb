# Normalises the kernel over the query points instead of the training points.
def nadaraya_watson(x_query, x_train, y_train, bandwidth):
    scores = gaussian_scores(np.reshape(x_query, (-1, 1)), np.reshape(x_train, (-1, 1)), bandwidth)
    return softmax(scores, axis=0) @ np.asarray(y_train, dtype=float)
