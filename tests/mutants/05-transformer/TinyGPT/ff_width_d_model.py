# Gives the feed-forward layers d_ff = d_model instead of 4 * d_model.
# replace: TransformerBlock(d_model, num_heads, 4 * d_model)
# with: TransformerBlock(d_model, num_heads, d_model)
