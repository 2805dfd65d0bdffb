# Counts the latent twice, once for the keys and once for the values, though one latent serves both.
# replace: per_layer = T * kw["d_latent"]
# with: per_layer = 2 * T * kw["d_latent"]
