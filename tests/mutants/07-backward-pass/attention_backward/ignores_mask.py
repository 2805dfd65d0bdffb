# Never applies the mask: every query attends to every key.
# replace: scores = np.where(allowed, scores, -np.inf)
# with: scores = scores
