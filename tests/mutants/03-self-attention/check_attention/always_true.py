# Trusts every implementation.
def check_attention(attn_fn):
    return True
