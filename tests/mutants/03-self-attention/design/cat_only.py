# Points the query of "sat" at "cat" alone.
W_q_design = 30.0 * np.outer(E[SAT], E[CAT]) / (E[SAT] @ E[SAT]) / (E[CAT] @ E[CAT])
W_k_design = np.eye(8)
