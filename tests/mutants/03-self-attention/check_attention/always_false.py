# Rejects every implementation, the correct one included.
def check_attention(attn_fn):
    return False
