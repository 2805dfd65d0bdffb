# Counts tokens from 1, so it targets "sat" (3) and "the" (6) instead of "cat" and "mat".
wanted = np.zeros(len(tokens))
wanted[[3, 5]] = 5.0 * np.sqrt(8)
q_sat = np.linalg.lstsq(E, wanted, rcond=None)[0]
W_q_design = np.outer(E[SAT], q_sat) / (E[SAT] @ E[SAT])
W_k_design = np.eye(8)
