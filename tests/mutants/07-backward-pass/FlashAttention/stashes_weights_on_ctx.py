# The full weights kept in a dict on ctx, not through save_for_backward (issue 31, hole b): the saved-tensor count
# alone misses them; the walk of ctx's attributes finds the (B, H, m, n) tensor.
# replace: ctx.causal, ctx.block_size = causal, block_size
# with: ctx.causal, ctx.block_size = causal, block_size\n        full = (Q @ K.transpose(-2, -1) * scale).softmax(dim=-1)\n        ctx.stash = {"P": full}
