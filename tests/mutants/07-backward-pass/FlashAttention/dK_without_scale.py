# Leaves the 1/sqrt(d) scale out of dK (dQ keeps it).
# replace: dK[..., j0:j1, :] += d_scores.transpose(-2, -1) @ q * scale
# with: dK[..., j0:j1, :] += d_scores.transpose(-2, -1) @ q
