# Reshapes the images straight into (B, N, C p p) without moving any axis: the "patches" are runs of pixels.
def patchify(images, patch_size):
    batch, channels, height, width = images.shape
    p = patch_size
    return images.reshape(batch, (height // p) * (width // p), channels * p * p)
