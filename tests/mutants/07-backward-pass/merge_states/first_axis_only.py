# Broadcasts the weights over the first axis only ([:, None] instead of [..., None]): right for one axis of queries,
# wrong for any other leading axes, which the contract allows.
# replace: o = (w_a[..., None] * o_a + w_b[..., None] * o_b) / np.where(ell > 0, ell, 1.0)[..., None]
# with: o = (w_a[:, None] * o_a + w_b[:, None] * o_b) / np.where(ell > 0, ell, 1.0)[:, None]
