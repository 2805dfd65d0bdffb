# Misses the tie: as T -> 0, puts all the weight on one largest score (np.argmax picks the first of the two).
# replace: is_max = scores == scores.max()
# with: is_max = np.arange(scores.size) == np.argmax(scores)
