# Scores the weight on the earlier occurrence itself, not on the position right after it.
# replace: target = (last + 1).clamp(min=0)
# with: target = last.clamp(min=0)
