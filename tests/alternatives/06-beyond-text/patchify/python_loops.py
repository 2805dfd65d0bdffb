# Cuts the patches one by one with Python loops over the grid and stacks them.
def patchify(images, patch_size):
    p = patch_size
    patches = []
    for top in range(0, images.shape[2], p):
        for left in range(0, images.shape[3], p):
            patches.append(images[:, :, top:top + p, left:left + p].flatten(start_dim=1))
    return torch.stack(patches, dim=1)
