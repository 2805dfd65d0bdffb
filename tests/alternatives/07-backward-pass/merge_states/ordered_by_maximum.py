# Puts the state with the larger maximum first, so only the other one is rescaled (by exp of a difference <= 0).
def merge_states(a, b):
    m_a, l_a, o_a = (np.asarray(x, dtype=float) for x in a)
    m_b, l_b, o_b = (np.asarray(x, dtype=float) for x in b)
    a_first = m_a >= m_b
    m_hi, l_hi = np.where(a_first, m_a, m_b), np.where(a_first, l_a, l_b)
    m_lo, l_lo = np.where(a_first, m_b, m_a), np.where(a_first, l_b, l_a)
    o_hi, o_lo = np.where(a_first[..., None], o_a, o_b), np.where(a_first[..., None], o_b, o_a)
    # Two empty states: the difference stays -inf and the factor 0 (no -inf - (-inf) computed).
    factor = np.exp(np.subtract(m_lo, m_hi, out=np.full_like(m_hi, -np.inf), where=np.isfinite(m_hi)))
    l = l_hi + l_lo * factor
    o = np.zeros_like(o_hi)
    np.divide(l_hi[..., None] * o_hi + (l_lo * factor)[..., None] * o_lo, l[..., None], out=o,
              where=l[..., None] > 0)
    return np.maximum(m_a, m_b), l, o
