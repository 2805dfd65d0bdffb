# Creates the parts in reverse order, adds the class token's position apart from the patches', collects maps by hooks.
class ViT(nn.Module):
    def __init__(self, image_size, patch_size, channels, num_classes, d_model, num_heads, num_layers):
        super().__init__()
        self.patch_size = patch_size
        self.head = nn.Linear(d_model, num_classes)
        self.norm = nn.LayerNorm(d_model)
        self.blocks = nn.ModuleList()
        for _ in range(num_layers):
            self.blocks.append(TransformerBlock(d_model, num_heads, 4 * d_model))
        self.position_embedding = nn.Parameter(torch.randn(1, (image_size // patch_size) ** 2 + 1, d_model) * 0.02)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d_model))
        self.patch_embedding = nn.Linear(channels * patch_size ** 2, d_model)
        self._maps = []
        for block in self.blocks:
            block.attn.register_forward_hook(lambda module, args, output: self._maps.append(output[1]))

    def forward(self, images, return_attention=False):
        patches = self.patch_embedding(patchify(images, self.patch_size)) + self.position_embedding[:, 1:]
        first = (self.cls_token + self.position_embedding[:, :1]).expand(len(images), 1, -1)
        x = torch.cat((first, patches), dim=1)
        self._maps = []
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.norm(x[:, 0]))  # LayerNorm acts on each token alone: normalise only the one read
        return (logits, list(self._maps)) if return_attention else logits
