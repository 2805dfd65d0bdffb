# Measures with einsum, keeps the counts in a dict, and reads off the first length where the ratio reaches 1 (a float).
ratios, counts = {}, {}
ff = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64))
for n in (16, 32, 64, 128, 256, 512, 1024):
    Q, K, V = (torch.randn(1, 4, n, 16) for _ in range(3))
    attn_ops = count_flops(lambda: torch.einsum("bhqk,bhkd->bhqd", torch.einsum("bhqd,bhkd->bhqk", Q, K).softmax(-1), V))
    ff_ops = count_flops(lambda: ff(torch.randn(1, n, 64)))
    counts[n] = (attn_ops, ff_ops)
    ratios[n] = attn_ops / ff_ops
    print(n, attn_ops, ff_ops, ratios[n])
attention_flops = [counts[n][0] for n in sorted(counts)]
feed_forward_flops = [float(counts[n][1]) for n in sorted(counts)]
crossover_length = float(min(n for n, r in ratios.items() if r >= 1))
