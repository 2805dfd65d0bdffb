# Uses nn.MultiheadAttention's polarity: True = may not attend.
# replace: masked_fill(~mask, float("-inf"))
# with: masked_fill(mask, float("-inf"))
# replace: has_key = mask.any(
# with: has_key = (~mask).any(
