# Multiplies the scores by the temperature instead of dividing.
prediction_cold = "one-hot"
prediction_hot = "uniform"
max_weights = np.array([softmax(scores * t).max() for t in temperatures])
