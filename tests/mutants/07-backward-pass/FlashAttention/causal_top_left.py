# Aligns the causal mask top left (query i sees keys j <= i) instead of the last query with the last key.
# replace:  + (n - m)
# with: 
# replace: j0 > i1 - 1 + n - m
# with: j0 > i1 - 1
