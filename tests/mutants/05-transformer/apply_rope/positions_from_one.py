# Counts positions from 1: the angle is (position + 1) * theta.
# replace: torch.as_tensor(positions, dtype=torch.float64, device=x.device)[:, None]
# with: (torch.as_tensor(positions, dtype=torch.float64, device=x.device)[:, None] + 1)
