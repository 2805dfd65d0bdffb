# Builds post-norm blocks (norm_first=False, the original Transformer's order) instead of the given pre-norm default.
# replace: TransformerBlock(d_model, num_heads, 4 * d_model) for _ in range(num_layers)
# with: TransformerBlock(d_model, num_heads, 4 * d_model, norm_first=False) for _ in range(num_layers)
