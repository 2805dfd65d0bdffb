# Believes temperature cannot change the weights, since softmax keeps the order of the scores.
# replace: limit_cold = is_max / is_max.sum()\nlimit_hot = np.full(scores.shape, 1 / scores.size)
# with: limit_cold = softmax(scores)\nlimit_hot = softmax(scores)
