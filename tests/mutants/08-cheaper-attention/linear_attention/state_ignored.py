# recurrent_linear_attention starts from zero whatever state it is given.
# replace: if state is None:
# with: if True:
