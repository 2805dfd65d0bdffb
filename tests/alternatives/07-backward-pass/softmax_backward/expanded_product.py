# Writes the product as diag(p) g - p (p . g): the elementwise product first, its sum reshaped with expand_dims.
def softmax_backward(p, grad_p, axis=-1):
    weighted = np.multiply(p, grad_p)
    total = np.expand_dims(weighted.sum(axis=axis), axis)
    return weighted - np.multiply(p, total)
