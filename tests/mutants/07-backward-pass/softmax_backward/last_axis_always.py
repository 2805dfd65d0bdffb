# Sums grad_p * p along the last axis whatever `axis` says.
# replace: np.sum(grad_p * p, axis=axis, keepdims=True)
# with: np.sum(grad_p * p, axis=-1, keepdims=True)
