# The product of the rows' norms: Cauchy-Schwarz's bound on dO_i . o_i, equal to it only where the rows are parallel.
# replace: return np.sum(np.asarray(dO) * np.asarray(output), axis=-1)
# with: return np.linalg.norm(dO, axis=-1) * np.linalg.norm(output, axis=-1)
