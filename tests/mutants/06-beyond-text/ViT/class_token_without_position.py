# Adds the position embedding to the patches only: the class token gets no position (position 0 is never used).
# replace: x = torch.cat([cls, x], dim=1) + self.position_embedding
# with: x = torch.cat([cls, x + self.position_embedding[:, 1:]], dim=1)
