# Identity projections: plain embedding similarity, which need not favour "cat" and "mat".
W_q_design = np.eye(8)
W_k_design = np.eye(8)
