# Uses F.leaky_relu's default negative slope 0.01 instead of GAT's 0.2.
# replace: negative_slope=0.2
# with: negative_slope=0.01
