# Passes a (B, T, T) causal mask, builds the blocks before the embeddings and returns a tuple, not a list.
class TinyGPT(nn.Module):
    def __init__(self, vocab_size, d_model, num_heads, num_layers, max_len):
        super().__init__()
        self.blocks = nn.Sequential(*[TransformerBlock(d_model, num_heads, 4 * d_model) for _ in range(num_layers)])
        self.wte = nn.Embedding(vocab_size, d_model)
        self.wpe = nn.Embedding(max_len, d_model)
        self.ln = nn.LayerNorm(d_model)
        self.proj = nn.Linear(d_model, vocab_size)

    def forward(self, tokens, return_attention=False):
        B, T = tokens.shape
        x = self.wte(tokens) + self.wpe(torch.arange(T))[None]
        keys, queries = torch.meshgrid(torch.arange(T), torch.arange(T), indexing="xy")
        mask = (keys <= queries).expand(B, T, T)
        maps = ()
        for block in self.blocks:
            x = block(x, mask)
            maps = maps + (block.attn.last_weights,)
        logits = self.proj(self.ln(x))
        return (logits, maps) if return_attention else logits
