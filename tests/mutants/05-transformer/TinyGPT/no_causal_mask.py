# Passes no mask to the blocks: every position sees the whole sequence, later tokens included.
# replace: x = block(x, causal)
# with: x = block(x)
