# Keeps only the latest key and value instead of appending.
# replace: self.keys[self.size] = k\n        self.values[self.size] = v\n        self.size += 1
# with: self.keys[0] = k\n        self.values[0] = v\n        self.size = 1
