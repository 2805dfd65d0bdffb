# Creates the blocks first, keeps them in an nn.ModuleDict, and passes a float 0/1 causal mask built with triu.
class TinyGPT(nn.Module):
    def __init__(self, vocab_size, d_model, num_heads, num_layers, max_len):
        super().__init__()
        self.layers = nn.ModuleDict({f"layer{i}": TransformerBlock(d_model, num_heads, d_model * 4)
                                     for i in range(num_layers)})
        self.token_table = nn.Embedding(vocab_size, d_model)
        self.position_table = nn.Embedding(max_len, d_model)
        self.ln_final = nn.LayerNorm(d_model)
        self.unembed = nn.Linear(d_model, vocab_size)

    def forward(self, tokens, return_attention=False):
        n = tokens.size(-1)
        h = self.token_table(tokens) + self.position_table.weight[:n]
        mask = 1.0 - torch.ones(n, n).triu(diagonal=1)  # 1 = may attend
        maps = []
        for name in sorted(self.layers, key=lambda k: int(k[5:])):
            h = self.layers[name](h, mask)
            maps.append(self.layers[name].attn.last_weights)
        out = self.unembed(self.ln_final(h))
        if not return_attention:
            return out
        return out, maps
