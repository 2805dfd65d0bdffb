# Writes each layer's parts inline (given attention, own LayerNorms and feed-forward) instead of calling TransformerBlock.
class TinyGPT(nn.Module):
    def __init__(self, vocab_size, d_model, num_heads, num_layers, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Parameter(nn.Embedding(max_len, d_model).weight.detach().clone())
        self.attns = nn.ModuleList(MultiHeadSelfAttention(d_model, num_heads) for _ in range(num_layers))
        self.ln1 = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(num_layers))
        self.ln2 = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(num_layers))
        self.mlps = nn.ModuleList(nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
                                  for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens, return_attention=False):
        T = tokens.shape[-1]
        x = self.tok(tokens) + self.pos[:T]
        causal = torch.tril(torch.ones(T, T)) > 0
        maps = []
        for attn, ln1, ln2, mlp in zip(self.attns, self.ln1, self.ln2, self.mlps):
            a, w = attn(ln1(x), causal)
            x = x + a
            x = x + mlp(ln2(x))
            maps.append(w)
        y = self.head(self.norm(x))
        return (y, maps) if return_attention else y
