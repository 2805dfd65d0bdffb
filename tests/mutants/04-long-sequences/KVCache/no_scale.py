# Forgets the 1 / sqrt(d_k) scale.
# replace:  / np.sqrt(self.keys.shape[1])
# with:
