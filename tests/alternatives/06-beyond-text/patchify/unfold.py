# Uses torch.nn.functional.unfold, which lists the patches of a convolution in the same order.
def patchify(images, patch_size):
    return F.unfold(images, kernel_size=patch_size, stride=patch_size).transpose(1, 2)
