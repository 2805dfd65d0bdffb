# Does not renormalise the rows of 0.5 A + 0.5 I: right only when every input row sums to 1.
def attention_rollout(attention):
    rollout = None
    for weights in attention:
        weights = torch.as_tensor(weights)
        identity = torch.eye(weights.shape[-1], dtype=weights.dtype)
        mixed = 0.5 * weights.mean(dim=1) + 0.5 * identity
        rollout = mixed if rollout is None else mixed @ rollout
    return rollout
