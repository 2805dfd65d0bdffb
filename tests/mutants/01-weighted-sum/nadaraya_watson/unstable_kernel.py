# Normalises exp(scores) by hand: 0 / 0 = nan far from the data with a small bandwidth.
def nadaraya_watson(x_query, x_train, y_train, bandwidth):
    k = np.exp(gaussian_scores(np.reshape(x_query, (-1, 1)), np.reshape(x_train, (-1, 1)), bandwidth))
    return (k @ np.asarray(y_train, dtype=float)) / k.sum(axis=1)
