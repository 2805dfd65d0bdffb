# The cache keeps the last window + 1 tokens after the sinks.
# replace: K.shape[2] - self.window:
# with: K.shape[2] - self.window - 1:
# replace: V.shape[2] - self.window:
# with: V.shape[2] - self.window - 1:
