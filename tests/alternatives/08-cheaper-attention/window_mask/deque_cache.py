# The mask from tril and triu; the cache keeps the sinks in a list and the window in a deque(maxlen=window) of
# single tokens.
from collections import deque


def window_mask(n, window, sinks=0):
    ones = torch.ones(n, n, dtype=torch.bool)
    recent = torch.tril(ones) & torch.triu(ones, diagonal=-(window - 1))
    sink = torch.tril(ones)
    sink[:, sinks:] = False
    return recent | sink


class SlidingWindowCache:
    def __init__(self, window, sinks=0):
        self.sinks = sinks
        self.first = []
        self.recent = deque(maxlen=window)
        self.count = 0

    def append(self, k, v):
        for i in range(k.shape[2]):
            token = (k[:, :, i:i + 1], v[:, :, i:i + 1])
            if self.count < self.sinks:
                self.first.append(token)
            else:
                self.recent.append(token)
            self.count += 1
        tokens = self.first + list(self.recent)
        return torch.cat([a for a, _ in tokens], dim=2), torch.cat([b for _, b in tokens], dim=2)
