# Flips the mask before passing it on, as if True meant "may not attend" (torch's nn.TransformerEncoderLayer polarity).
# replace: def forward(self, x, mask=None):
# with: def forward(self, x, mask=None):\n        mask = None if mask is None else ~torch.as_tensor(mask)
