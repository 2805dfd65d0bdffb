# Fixed sinusoidal positions (a buffer), parts created in reverse order, weights collected with forward hooks.
class TinyGPT(nn.Module):
    def __init__(self, vocab_size, d_model, num_heads, num_layers, max_len):
        super().__init__()
        self.out = nn.Linear(d_model, vocab_size)
        self.ln_f = nn.LayerNorm(d_model)
        self.layers = nn.ModuleList()
        for _ in range(num_layers):
            self.layers.append(TransformerBlock(d_model, num_heads, 4 * d_model))
        p = torch.arange(max_len)[:, None]
        f = 10000.0 ** (-torch.arange(0, d_model, 2) / d_model)
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(p * f), torch.cos(p * f)
        self.register_buffer("pe", pe)
        self.embed = nn.Embedding(vocab_size, d_model)
        self._seen = []
        for layer in self.layers:
            layer.attn.register_forward_hook(lambda mod, inp, outp: self._seen.append(outp[1]))

    def forward(self, tokens, return_attention=False):
        T = tokens.size(1)
        h = self.embed(tokens) + self.pe[:T]
        mask = torch.ones(T, T).tril().bool()
        self._seen = []
        for layer in self.layers:
            h = layer(h, mask)
        logits = self.out(self.ln_f(h))
        if return_attention:
            return logits, list(self._seen)
        return logits
