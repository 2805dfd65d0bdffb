# Python floats and math.exp entry by entry within each chunk; a list for the weights.
import math


def online_softmax(x, chunk_size):
    m, total = -math.inf, 0.0
    for start in range(0, len(x), chunk_size):
        for value in x[start:start + chunk_size]:
            value = float(value)
            if value == -math.inf:
                continue
            if value > m:
                total = total * math.exp(m - value) if m > -math.inf else 0.0
                m = value
            total += math.exp(value - m)
    weights = []
    for start in range(0, len(x), chunk_size):
        weights.extend(math.exp(float(v) - m) / total if total > 0 and v > -math.inf else 0.0 for v in x[start:start + chunk_size])
    return np.array(weights)
