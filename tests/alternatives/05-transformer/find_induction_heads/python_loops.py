# Plain Python loops with a dictionary of where each token was last seen; returns a numpy array.
def find_induction_heads(attention, tokens):
    tokens = [[int(t) for t in row] for row in tokens]
    pairs = []  # (sequence, query position, target key position)
    for b, row in enumerate(tokens):
        seen = {}
        for t, token in enumerate(row):
            if token in seen:
                pairs.append((b, t, seen[token] + 1))
            seen[token] = t
    result = np.zeros((len(attention), attention[0].shape[1]))
    for layer, weights in enumerate(attention):
        w = weights.detach().numpy() if torch.is_tensor(weights) else np.asarray(weights)
        for head in range(w.shape[1]):
            result[layer, head] = sum(w[b, head, t, j] for b, t, j in pairs) / len(pairs)
    return result
