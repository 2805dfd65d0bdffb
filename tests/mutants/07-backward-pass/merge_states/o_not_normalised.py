# Adds the weighted partial outputs but does not divide by the merged normaliser l.
# replace: o = (w_a[..., None] * o_a + w_b[..., None] * o_b) / np.where(ell > 0, ell, 1.0)[..., None]
# with: o = w_a[..., None] * o_a + w_b[..., None] * o_b
