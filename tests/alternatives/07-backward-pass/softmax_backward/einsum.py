# Moves `axis` last and takes the dot product p . grad_p with einsum, then moves the axis back.
def softmax_backward(p, grad_p, axis=-1):
    p, grad_p = np.moveaxis(np.asarray(p), axis, -1), np.moveaxis(np.asarray(grad_p), axis, -1)
    dot = np.einsum("...i,...i->...", p, grad_p)
    return np.moveaxis(p * grad_p - p * dot[..., None], -1, axis)
