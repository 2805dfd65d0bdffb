# Does not add self-loops: a node attends only to the nodes it receives from, and a node without edges gets nan.
# replace: allowed = allowed | torch.eye(n, dtype=torch.bool, device=x.device)
# with: allowed = allowed
