# Counts the position itself as an earlier occurrence of its own token (diagonal included).
# replace: diagonal=-1
# with: diagonal=0
# replace: target = (last + 1).clamp(min=0)
# with: target = (last + 1).clamp(min=0, max=length - 1)
