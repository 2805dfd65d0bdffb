# Leaves out the residual connection: multiplies the head-averaged weights without adding the identity.
# replace: mixed = 0.5 * weights.mean(dim=1) + 0.5 * identity
# with: mixed = weights.mean(dim=1)
