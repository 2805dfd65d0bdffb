# Takes the softmax over all nodes: the adjacency is never used, every node attends to every node.
# replace: scores = scores.masked_fill(~allowed[:, :, None], float("-inf"))
# with: scores = scores
