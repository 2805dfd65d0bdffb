# causal=False is ignored: the output is causal always.
# replace: if not causal:
# with: if False:
