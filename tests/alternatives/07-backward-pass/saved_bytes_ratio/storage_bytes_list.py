# Keeps every saved tensor in a list and counts the distinct storages afterwards (torch's own
# UntypedStorage objects compared by address), and writes plain attention with F.softmax, .mT and torch.matmul.
import torch.nn.functional as F

kept = []
with torch.autograd.graph.saved_tensors_hooks(lambda t: kept.append(t) or t, lambda t: t):
    Q, K, V = (torch.rand(1, 1, 2048, 64, dtype=torch.float64).requires_grad_() for _ in range(3))
    torch.matmul(F.softmax(torch.matmul(Q, K.mT) / math.sqrt(64), dim=-1), V)
    plain = sum({t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in kept}.values())
    kept.clear()
    flash_attention(Q, K, V)
saved_bytes_ratio = plain / sum({t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in kept}.values())
