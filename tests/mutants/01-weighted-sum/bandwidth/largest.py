# Chooses the largest bandwidth: the smoothest curve.
validation_mse = np.array([np.mean((nadaraya_watson(x_val, x_fit, y_fit, h) - y_val) ** 2) for h in candidate_bandwidths])
chosen_bandwidth = float(candidate_bandwidths[-1])
