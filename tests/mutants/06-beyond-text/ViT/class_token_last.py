# Appends the class token after the patches (index N, read back from there) instead of putting it in front.
# replace: x = torch.cat([cls, x], dim=1) + self.position_embedding
# with: x = torch.cat([x, cls], dim=1) + self.position_embedding
# replace: logits = self.head(self.norm(x)[:, 0])
# with: logits = self.head(self.norm(x)[:, -1])
