# A loop that appends errors, and min() with a key to choose.
errors = []
for h in candidate_bandwidths:
    prediction = nadaraya_watson(x_val, x_fit, y_fit, h)
    errors.append(((prediction - y_val) ** 2).sum() / len(y_val))
validation_mse = np.array(errors)
chosen_bandwidth = min(candidate_bandwidths, key=lambda h: errors[list(candidate_bandwidths).index(h)])
