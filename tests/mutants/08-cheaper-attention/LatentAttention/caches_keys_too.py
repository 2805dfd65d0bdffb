# Caches the rebuilt keys beside the latents, (C, up_k(C)): right outputs, a cache larger than the latent.
# replace: return self.out(heads.transpose(1, 2).reshape(B, t, d_model)), (C,)
# with: return self.out(heads.transpose(1, 2).reshape(B, t, d_model)), (C, self.up_k(C))
