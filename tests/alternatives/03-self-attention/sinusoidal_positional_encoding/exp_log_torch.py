# The Annotated Transformer's form, exp(-2i log(10000) / d), computed in PyTorch and returned as NumPy.
def sinusoidal_positional_encoding(n, d):
    position = torch.arange(n, dtype=torch.float64)[:, None]
    div_term = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * -(math.log(10000.0) / d))
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term[: d // 2])
    return pe.numpy()
