# Keeps only the latest key and value instead of appending.
# replace: np.vstack([self.keys, np.asarray(k, dtype=float)[None]])
# with: np.asarray(k, dtype=float)[None]
# replace: np.vstack([self.values, np.asarray(v, dtype=float)[None]])
# with: np.asarray(v, dtype=float)[None]
