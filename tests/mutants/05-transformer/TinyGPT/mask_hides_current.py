# Builds the causal mask with diagonal=-1, so a position sees only the earlier ones, not itself.
# replace: causal = torch.tril(torch.ones(length, length, dtype=torch.bool, device=tokens.device))
# with: causal = torch.tril(torch.ones(length, length, dtype=torch.bool, device=tokens.device), diagonal=-1)
