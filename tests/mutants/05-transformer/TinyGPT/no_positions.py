# Adds no position embedding, so attention cannot tell the previous token from any other.
# replace: x = self.token_embedding(tokens) + self.position_embedding(positions)
# with: x = self.token_embedding(tokens)
