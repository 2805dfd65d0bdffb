# Computes in float32, PyTorch's default dtype, whatever the dtype of the weights (compared at float32's precision).
def attention_rollout(attention):
    result = None
    for weights in attention:
        averaged = torch.as_tensor(weights).float().mean(dim=1)
        layer = 0.5 * averaged + 0.5 * torch.eye(averaged.shape[-1])
        layer = layer / layer.sum(dim=-1, keepdim=True)
        result = layer if result is None else torch.matmul(layer, result)
    return result
