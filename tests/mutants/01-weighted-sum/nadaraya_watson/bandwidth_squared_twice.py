# Passes bandwidth ** 2 where the bandwidth is expected.
def nadaraya_watson(x_query, x_train, y_train, bandwidth):
    output, _ = attention_pool(np.reshape(x_query, (-1, 1)), np.reshape(x_train, (-1, 1)),
                               np.reshape(y_train, (-1, 1)), lambda q, k: gaussian_scores(q, k, bandwidth**2))
    return output[:, 0]
