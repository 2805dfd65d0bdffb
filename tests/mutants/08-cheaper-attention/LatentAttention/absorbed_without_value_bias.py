# Absorbed, forgets up_v's bias, which each head's output gains (its weights sum to 1).
# replace: heads = heads + self.up_v.bias.view(H, 1, d_head)  # the weights sum to 1
# with: heads = heads
