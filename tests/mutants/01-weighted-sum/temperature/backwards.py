# Predictions swapped: thinks a low temperature flattens the weights.
prediction_cold = "uniform"
prediction_hot = "one-hot"
max_weights = np.array([softmax(scores / t).max() for t in temperatures])
