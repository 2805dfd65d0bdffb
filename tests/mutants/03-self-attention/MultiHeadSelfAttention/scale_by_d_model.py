# Scales by sqrt(d_model) instead of sqrt(d_head).
# replace: / math.sqrt(self.d_head)
# with: / math.sqrt(d_model)
