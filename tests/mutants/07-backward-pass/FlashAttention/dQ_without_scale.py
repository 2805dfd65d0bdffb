# Leaves the 1/sqrt(d) scale out of dQ (dK keeps it).
# replace: dQ[..., i0:i1, :] += d_scores @ k * scale
# with: dQ[..., i0:i1, :] += d_scores @ k
