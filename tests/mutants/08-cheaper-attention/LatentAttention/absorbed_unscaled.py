# Absorbed, forgets the scale 1/sqrt(d_head) of the scores.
# replace: scores = q_latent @ C[:, None].transpose(-2, -1) / math.sqrt(d_head)  # (B, H, t, T)
# with: scores = q_latent @ C[:, None].transpose(-2, -1)
