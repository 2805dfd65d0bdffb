# The mask from the differences of positions; the cache keeps every token's absolute position beside it and selects
# the tokens to keep with index_select.
def window_mask(n, window, sinks=0):
    position = torch.arange(n)
    distance = position.unsqueeze(1) - position.unsqueeze(0)
    return (distance >= 0) & ((distance < window) | (position.unsqueeze(0) < sinks))


class SlidingWindowCache:
    def __init__(self, window, sinks=0):
        self.window, self.sinks = window, sinks
        self.keys = self.values = None
        self.positions = torch.zeros(0, dtype=torch.long)

    def append(self, k, v):
        start = int(self.positions[-1]) + 1 if len(self.positions) else 0
        positions = torch.cat([self.positions, torch.arange(start, start + k.shape[2])])
        keys = k if self.keys is None else torch.cat([self.keys, k], dim=2)
        values = v if self.values is None else torch.cat([self.values, v], dim=2)
        last = int(positions[-1])
        keep = ((positions < self.sinks) | (positions > last - self.window)).nonzero().flatten()
        self.positions = positions[keep]
        self.keys, self.values = keys.index_select(2, keep), values.index_select(2, keep)
        return self.keys, self.values
