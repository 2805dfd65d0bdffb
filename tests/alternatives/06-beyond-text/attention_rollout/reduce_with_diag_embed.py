# Builds every layer's matrix first (identity by diag_embed, rows normalised by einsum) and multiplies with reduce.
import functools


def attention_rollout(attention):
    matrices = []
    for weights in attention:
        mean = torch.as_tensor(weights).mean(1)
        half_identity = torch.diag_embed(torch.full(mean.shape[:-1], 0.5, dtype=mean.dtype))
        layer = mean / 2 + half_identity
        matrices.append(layer / torch.einsum("bij->bi", layer)[..., None])
    return functools.reduce(lambda so_far, layer: torch.bmm(layer, so_far), matrices)
