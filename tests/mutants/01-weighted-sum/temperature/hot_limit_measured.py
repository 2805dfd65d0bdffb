# Takes the weights measured at T = 100 for the limit T -> infinity: close to uniform, but not the limit.
# replace: limit_hot = np.full(scores.shape, 1 / scores.size)
# with: limit_hot = softmax(scores / temperatures[-1])
