# Merges the states without rescaling them to the common maximum: l = l_a + l_b, o weighted by l_a and l_b.
# replace: w_a, w_b = l_a * np.exp(m_a - shift), l_b * np.exp(m_b - shift)
# with: w_a, w_b = l_a, l_b
