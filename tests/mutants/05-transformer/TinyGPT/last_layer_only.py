# Returns the attention weights of the last layer only, not one tensor per layer.
# replace: attention.append(block.attn.last_weights)
# with: attention = [block.attn.last_weights]
