# Computes in PyTorch (float64) with masked_fill and nan_to_num, and hands back NumPy arrays.
def scaled_dot_product_attention(Q, K, V, mask=None):
    Q, K, V = (torch.as_tensor(np.asarray(a, dtype=np.float64)) for a in (Q, K, V))
    scores = torch.matmul(Q, K.transpose(-1, -2)) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~torch.as_tensor(np.asarray(mask, dtype=bool)), float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return torch.matmul(weights, V).numpy(), weights.numpy()
