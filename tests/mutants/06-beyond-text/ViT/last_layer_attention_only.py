# Returns the weights of the last layer only, not one tensor per layer.
# replace: return (logits, attention) if return_attention else logits
# with: return (logits, attention[-1:]) if return_attention else logits
