# Rotates every pair the other way (by minus the angle).
# replace: torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1)
# with: torch.stack([even * cos + odd * sin, -even * sin + odd * cos], dim=-1)
