# Gives the blocks the mask in torch's polarity (True = may NOT attend): each position sees only later tokens.
# replace: x = block(x, causal)
# with: x = block(x, ~causal)
