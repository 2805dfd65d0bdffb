# The right direction, but scores too small: the weights of "sat" stay nearly uniform.
wanted = np.zeros(len(tokens))
wanted[[CAT, MAT]] = 0.5
q_sat = np.linalg.lstsq(E, wanted, rcond=None)[0]
W_q_design = np.outer(E[SAT], q_sat) / (E[SAT] @ E[SAT])
W_k_design = np.eye(8)
