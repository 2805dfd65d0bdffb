# Believes temperature cannot matter since softmax preserves the order of scores.
prediction_cold = "unchanged"
prediction_hot = "unchanged"
max_weights = np.array([softmax(scores / t).max() for t in temperatures])
