# Shifts by the merged maximum even when it is -inf: two empty states give exp(-inf - (-inf)) = NaN.
# replace: shift = np.where(np.isfinite(m), m, 0.0)
# with: shift = m
