# Measures the two products separately, collects the counts in numpy arrays and answers with a numpy integer.
lengths = np.array([16, 32, 64, 128, 256, 512, 1024])
mlp = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64))
quadratic, linear = [], []
for n in lengths:
    queries, keys, values = torch.randn(1, 4, int(n), 16), torch.randn(1, 4, int(n), 16), torch.randn(1, 4, int(n), 16)
    weights = torch.softmax(queries @ keys.mT / 4, dim=-1)
    quadratic.append(count_flops(lambda: queries @ keys.mT) + count_flops(lambda: weights @ values))
    linear.append(count_flops(lambda: mlp(torch.randn(1, int(n), 64))))
attention_flops, feed_forward_flops = np.array(quadratic), np.array(linear)
print(np.c_[lengths, attention_flops, feed_forward_flops])
crossover_length = lengths[np.argmax(attention_flops >= feed_forward_flops)]
