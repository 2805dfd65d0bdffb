# Prefers smoothness: the largest bandwidth whose validation error is within 5% of the best.
validation_mse = np.array([np.mean(np.square(nadaraya_watson(x_val, x_fit, y_fit, h) - y_val)) for h in candidate_bandwidths])
chosen_bandwidth = max(h for h, e in zip(candidate_bandwidths, validation_mse) if e <= 1.05 * validation_mse.min())
