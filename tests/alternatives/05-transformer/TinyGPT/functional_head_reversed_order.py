# Creates the parts in reverse order, calls the blocks by keyword, and applies the final norm and the output layer
# through F.layer_norm and F.linear on their modules' parameters; the causal mask is written as a comparison.
class TinyGPT(nn.Module):
    def __init__(self, vocab_size, d_model, num_heads, num_layers, max_len):
        super().__init__()
        self.head = nn.Linear(d_model, vocab_size)
        self.norm = nn.LayerNorm(d_model)
        self.blocks = nn.ModuleList()
        for _ in range(num_layers):
            self.blocks.append(TransformerBlock(d_model=d_model, num_heads=num_heads, d_ff=4 * d_model, norm_first=True))
        self.pos = nn.Embedding(max_len, d_model)
        self.tok = nn.Embedding(vocab_size, d_model)

    def forward(self, tokens, return_attention=False):
        T = tokens.shape[1]
        steps = torch.arange(T)
        x = self.tok(tokens) + self.pos(steps)[None, :, :]
        may_attend = steps[None, :] <= steps[:, None]  # [query, key]
        weights = []
        for block in self.blocks:
            x = block(x=x, mask=may_attend)
            weights.append(block.attn.last_weights)
        x = F.layer_norm(x, (x.shape[-1],), self.norm.weight, self.norm.bias, self.norm.eps)
        logits = F.linear(x, self.head.weight, self.head.bias)
        return (logits, weights) if return_attention else logits
