# Uses Tensor.unfold twice (sliding windows along rows, then columns) and moves the channel axis with permute.
def patchify(images, patch_size):
    p = patch_size
    windows = images.unfold(2, p, p).unfold(3, p, p)  # (B, C, rows, columns, p, p)
    b, c, rows, columns = windows.shape[:4]
    return windows.permute(0, 2, 3, 1, 4, 5).contiguous().view(b, rows * columns, c * p * p)
