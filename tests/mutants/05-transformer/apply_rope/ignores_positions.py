# Ignores the positions argument: always rotates by 0, 1, ..., n-1.
# replace: if positions is None:
# with: if True:
