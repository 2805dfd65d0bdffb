# Fills masked scores with -1e9: a fully masked query gets uniform weights over the padding instead of zeros.
# replace: scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
# with: scores.masked_fill(~mask, -1e9)
# replace: weights = scores.softmax(dim=-1) * has_key
# with: weights = scores.softmax(dim=-1)
