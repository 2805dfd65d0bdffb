# Once the window fills, the cache keeps the last window tokens only: the sinks are evicted with the rest.
# replace: K = torch.cat([K[:, :, :self.sinks], K[:, :, K.shape[2] - self.window:]], dim=2)
# with: K = K[:, :, K.shape[2] - self.window:]
# replace: V = torch.cat([V[:, :, :self.sinks], V[:, :, V.shape[2] - self.window:]], dim=2)
# with: V = V[:, :, V.shape[2] - self.window:]
