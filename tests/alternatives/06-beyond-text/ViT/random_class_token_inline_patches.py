# Draws the class token from N(0, 0.02^2) (first), cuts the patches inline with Tensor.unfold, keeps no list of blocks' maps.
class ViT(nn.Module):
    def __init__(self, image_size, patch_size, channels, num_classes, d_model, num_heads, num_layers):
        super().__init__()
        self.cls_token = nn.Parameter(torch.randn(1, 1, d_model) * 0.02)
        self.patch_size = patch_size
        patches = (image_size // patch_size) ** 2
        self.patch_embedding = nn.Linear(channels * patch_size ** 2, d_model)
        self.position_embedding = nn.Parameter(0.02 * torch.randn(1, patches + 1, d_model))
        self.blocks = nn.ModuleList([TransformerBlock(d_model, num_heads, 4 * d_model) for _ in range(num_layers)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, images, return_attention=False):
        p = self.patch_size
        b, c = images.shape[:2]
        windows = images.unfold(2, p, p).unfold(3, p, p).permute(0, 2, 3, 1, 4, 5)
        x = self.patch_embedding(windows.reshape(b, -1, c * p * p))
        x = torch.cat([self.cls_token.expand(b, -1, -1), x], dim=1)
        x = x + self.position_embedding
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.norm(x)[:, 0])
        if return_attention:
            return logits, [block.attn.last_weights for block in self.blocks]
        return logits
