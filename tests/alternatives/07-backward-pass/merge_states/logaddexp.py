# Works with logsumexps: log l + m of each state, combined with np.logaddexp, then the outputs by their shares.
def merge_states(a, b):
    m_a, l_a, o_a = a
    m_b, l_b, o_b = b
    with np.errstate(divide="ignore", invalid="ignore"):  # log 0 = -inf for an empty state, on purpose
        lse_a, lse_b = m_a + np.log(l_a), m_b + np.log(l_b)
        lse = np.logaddexp(lse_a, lse_b)
        empty = np.isneginf(lse)
        share_a = np.where(empty, 0.0, np.exp(lse_a - np.where(empty, 0.0, lse)))
    m = np.maximum(m_a, m_b)
    l = np.where(empty, 0.0, np.exp(np.where(empty, 0.0, lse - np.where(np.isneginf(m), 0.0, m))))
    share_b = np.where(empty, 0.0, 1.0 - share_a)
    return m, l, share_a[..., None] * o_a + share_b[..., None] * o_b
