# Ignores norm_first: always pre-norm.
# replace: if self.norm_first:
# with: if True:
