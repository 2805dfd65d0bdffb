# Causal: goes through every key block instead of skipping those after the queries, and masks only the blocks it
# would not have skipped, so the keys of the later blocks are seen unmasked in the forward pass.
# replace:                     break  # this key block and every later one is after the last query of the block: skipped
# with:                     pass
# replace:                 if causal:\n                    scores = scores.masked_fill(
# with:                 if causal and j0 <= i1 - 1 + n - m:\n                    scores = scores.masked_fill(
