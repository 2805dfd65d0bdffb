# Stacks the layers into one float32 tensor (L, B, H, T, T) and returns float32 (compared at float32's precision, as
# the instructions say; the dtype itself is not graded).
def attention_rollout(attention):
    stacked = torch.stack([torch.as_tensor(w, dtype=torch.float32) for w in attention])  # (L, B, H, T, T)
    length = stacked.shape[-1]
    layers = 0.5 * stacked.mean(dim=2) + 0.5 * torch.eye(length)  # (L, B, T, T)
    layers = layers / layers.sum(dim=-1, keepdim=True)
    result = torch.eye(length).expand_as(layers[0])
    for layer in layers:
        result = torch.bmm(layer, result)
    return result
