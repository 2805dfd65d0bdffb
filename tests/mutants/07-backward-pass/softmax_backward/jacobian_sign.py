# Uses the Jacobian with the wrong sign, p p^T - diag(p): the gradient points the other way.
# replace: return p * (grad_p - np.sum(grad_p * p, axis=axis, keepdims=True))
# with: return p * (np.sum(grad_p * p, axis=axis, keepdims=True) - grad_p)
