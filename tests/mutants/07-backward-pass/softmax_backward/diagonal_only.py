# Keeps only the diagonal of the Jacobian, diag(p) g, and forgets the - p (p . g) term.
# replace: return p * (grad_p - np.sum(grad_p * p, axis=axis, keepdims=True))
# with: return p * grad_p
