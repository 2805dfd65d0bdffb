# Counts only the scores Q K^T, not the weighted sum of the values.
# replace: mixing = count_flops(lambda: torch.softmax(q @ k.transpose(-2, -1) / 4.0, dim=-1) @ v)
# with: mixing = count_flops(lambda: q @ k.transpose(-2, -1))
