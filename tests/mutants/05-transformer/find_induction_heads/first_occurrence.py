# Uses the FIRST earlier occurrence of the token instead of the last one.
# replace: torch.where(earlier_same, key_index, -1).amax(dim=-1)
# with: torch.where(earlier_same, key_index, length).amin(dim=-1)
# replace: repeated = last >= 0
# with: repeated = last < length
# replace: target = (last + 1).clamp(min=0)
# with: target = (last + 1).clamp(max=length - 1)
