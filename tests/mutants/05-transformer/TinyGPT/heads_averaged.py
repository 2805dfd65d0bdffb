# Returns each layer's weights averaged over the heads, (B, T, T), instead of (B, heads, T, T).
# replace: attention.append(block.attn.last_weights)
# with: attention.append(block.attn.last_weights.mean(dim=1))
