# Counts a tensor saved twice (the weights, by softmax and by the matmul) only once, against the instructions.
# replace:     total = 0\n
# with:     total, seen = 0, set()\n
# replace:         total += tensor.numel() * tensor.element_size()
# with:         if tensor.data_ptr() not in seen:\n            seen.add(tensor.data_ptr())\n            total += tensor.numel() * tensor.element_size()
