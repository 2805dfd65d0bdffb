# Counts the tensors saved instead of their bytes (both save five).
# replace: total += tensor.numel() * tensor.element_size()
# with: total += 1
