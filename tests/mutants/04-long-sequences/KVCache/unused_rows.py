# Attends over the whole preallocated storage, the unused zero rows included, not only the cached tokens.
# replace: keys, values = self.keys[:self.size], self.values[:self.size]
# with: keys, values = self.keys, self.values
