# Computes in NumPy, one item of the batch and one layer at a time, and returns a float64 tensor.
def attention_rollout(attention):
    arrays = [np.asarray(torch.as_tensor(w).detach(), dtype=float) for w in attention]
    batch, _, length, _ = arrays[0].shape
    out = np.empty((batch, length, length))
    for b in range(batch):
        total = np.eye(length)
        for a in arrays:
            m = 0.5 * a[b].mean(axis=0) + 0.5 * np.eye(length)
            for i in range(length):
                m[i] /= m[i].sum()
            total = m @ total
        out[b] = total
    return torch.from_numpy(out)
