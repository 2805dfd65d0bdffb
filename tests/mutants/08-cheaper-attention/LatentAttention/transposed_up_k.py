# Folds up_k's weight into the query transposed: up_k.weight.T (d_latent, d_model) cut into heads as if it were
# (d_model, d_latent).
# replace: W_k = self.up_k.weight.view(H, d_head, self.d_latent)
# with: W_k = self.up_k.weight.T.reshape(H, d_head, self.d_latent)
