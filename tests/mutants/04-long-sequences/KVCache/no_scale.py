# Forgets the 1 / sqrt(d_k) scale.
# replace:  / np.sqrt(keys.shape[1])
# with:
