# The chunked form forgets the earlier chunks' normaliser z (it keeps their S in the numerator).
# replace: outputs.append((fq @ S + within @ vc) / (fq @ z + within.sum(dim=-1, keepdim=True)))
# with: outputs.append((fq @ S + within @ vc) / within.sum(dim=-1, keepdim=True))
