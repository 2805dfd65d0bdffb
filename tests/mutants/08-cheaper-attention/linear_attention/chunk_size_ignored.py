# The chunked form ignores chunk_size and computes the parallel form (one n x n masked product): right values, not
# the stated bound.
# replace: c = n if chunk_size is None else chunk_size
# with: c = n
