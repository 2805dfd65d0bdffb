# Reads the adjacency the other way round: node i attends to the nodes that receive from it (adjacency[j, i]).
# replace: allowed = torch.as_tensor(adjacency, dtype=torch.bool, device=x.device)
# with: allowed = torch.as_tensor(adjacency, dtype=torch.bool, device=x.device).T
