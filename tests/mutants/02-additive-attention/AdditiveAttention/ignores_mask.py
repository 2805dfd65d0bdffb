# Never applies the mask.
# replace: if mask is None:
# with: if True:
