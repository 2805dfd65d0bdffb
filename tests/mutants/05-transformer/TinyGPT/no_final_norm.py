# Creates the final LayerNorm but never applies it: the output layer reads the residual stream as it is.
# replace: logits = self.lm_head(self.final_norm(x))
# with: logits = self.lm_head(x)
