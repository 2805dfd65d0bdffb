# Swaps the limits: thinks a low temperature flattens the weights and a high one sharpens them.
# replace: limit_cold = is_max / is_max.sum()\nlimit_hot = np.full(scores.shape, 1 / scores.size)
# with: limit_hot = is_max / is_max.sum()\nlimit_cold = np.full(scores.shape, 1 / scores.size)
