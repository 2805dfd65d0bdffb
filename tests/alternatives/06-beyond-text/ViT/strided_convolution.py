# Embeds the patches with a strided convolution whose kernel is patch_embedding's weight (the attribute stays nn.Linear).
class ViT(nn.Module):
    def __init__(self, image_size, patch_size, channels, num_classes, d_model, num_heads, num_layers):
        super().__init__()
        self.p, self.channels, self.d_model = patch_size, channels, d_model
        self.patch_embedding = nn.Linear(channels * patch_size * patch_size, d_model)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d_model))
        self.position_embedding = nn.Parameter(torch.randn(1, (image_size // patch_size) ** 2 + 1, d_model) * 0.02)
        self.blocks = nn.ModuleList(TransformerBlock(d_model, num_heads, 4 * d_model) for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, images, return_attention=False):
        kernel = self.patch_embedding.weight.reshape(self.d_model, self.channels, self.p, self.p)
        grid = F.conv2d(images, kernel, self.patch_embedding.bias, stride=self.p)  # (B, d_model, rows, columns)
        tokens = grid.flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.repeat(images.shape[0], 1, 1), tokens], dim=1) + self.position_embedding
        maps = []
        for block in self.blocks:
            x = block(x)
            maps.append(block.attn.last_weights)
        out = self.head(self.norm(x)[:, 0, :])
        return (out, maps) if return_attention else out
