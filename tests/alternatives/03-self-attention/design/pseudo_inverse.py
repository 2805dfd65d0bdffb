# Solves E u = wanted with the pseudo-inverse of all seven rows, W_k the identity.
wanted = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]) * 30.0
u = np.linalg.pinv(E) @ wanted
W_q_design = np.outer(E[SAT], u) / (E[SAT] @ E[SAT])
W_k_design = np.eye(8)
