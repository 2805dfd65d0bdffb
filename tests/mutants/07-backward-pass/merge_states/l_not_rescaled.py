# Rescales the outputs to the common maximum but returns l = l_a + l_b, relative to no maximum in particular.
# replace: return m, ell, o
# with: return m, l_a + l_b, o
