# Normalises over the temperatures (axis 0 of the table) instead of over the scores.
# replace: weights_by_temperature = np.array([softmax(scores / t) for t in temperatures])
# with: weights_by_temperature = softmax(scores[None, :] / temperatures[:, None], axis=0)
