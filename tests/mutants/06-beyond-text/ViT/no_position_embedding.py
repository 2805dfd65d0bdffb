# Creates position_embedding but never adds it: the tokens carry no position, so the ViT sees a bag of patches.
# replace: x = torch.cat([cls, x], dim=1) + self.position_embedding
# with: x = torch.cat([cls, x], dim=1)
