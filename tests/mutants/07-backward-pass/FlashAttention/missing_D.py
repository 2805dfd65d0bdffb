# Forgets D = rowsum(dO * O) in the backward pass: dS = P * dP.
# replace: d_scores = weights * (d_weights - D[..., i0:i1, None])
# with: d_scores = weights * d_weights
