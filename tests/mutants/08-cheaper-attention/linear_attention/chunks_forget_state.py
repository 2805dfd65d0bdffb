# The chunked form forgets the earlier chunks' S in the numerator (it keeps their normaliser z).
# replace: outputs.append((fq @ S + within @ vc) / (fq @ z + within.sum(dim=-1, keepdim=True)))
# with: outputs.append((within @ vc) / (fq @ z + within.sum(dim=-1, keepdim=True)))
