# Counts one head at a time and sums over the 4 heads, stores float32 tensors, and finds the crossover with searchsorted.
lengths = [16, 32, 64, 128, 256, 512, 1024]
block_ff = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64))
per_n_attention, per_n_ff = [], []
for n in lengths:
    total = 0
    for head in range(4):
        q, k, v = torch.randn(n, 16), torch.randn(n, 16), torch.randn(n, 16)
        total += count_flops(lambda: torch.softmax(q @ k.T / 16 ** 0.5, dim=-1) @ v)
    per_n_attention.append(total)
    per_n_ff.append(count_flops(lambda: block_ff(torch.randn(1, n, 64))))
    print(f"n={n}: attention {per_n_attention[-1]:,} feed-forward {per_n_ff[-1]:,}")
attention_flops = torch.tensor(per_n_attention, dtype=torch.float32)
feed_forward_flops = torch.tensor(per_n_ff, dtype=torch.float32)
crossover_length = lengths[int(torch.searchsorted((attention_flops >= feed_forward_flops).int(), 1))]
