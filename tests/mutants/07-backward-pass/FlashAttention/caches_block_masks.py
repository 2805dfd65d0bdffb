# Caches each causal block's mask in a global dict, to reuse it in later calls: nothing is saved on ctx, no operation
# outputs m·n elements and the (m, n) memory test runs without causal, so it kept every point; but what the forward
# pass leaves alive grows with m·n (the masks of every block on or below the diagonal), which the weak references find.
# replace: class FlashAttention(torch.autograd.Function):
# with: _BLOCK_MASKS = {}  # (i0, i1, j0, j1, m, n) -> the mask of that block, kept for later calls\n\n\nclass FlashAttention(torch.autograd.Function):
# replace: scores = scores.masked_fill(~(torch.arange(j0, j1) <= torch.arange(i0, i1)[:, None] + (n - m)), -math.inf)
# with: allowed = _BLOCK_MASKS.setdefault((i0, i1, j0, j1, m, n), torch.arange(j0, j1) <= torch.arange(i0, i1)[:, None] + (n - m))\n                    scores = scores.masked_fill(~allowed, -math.inf)
