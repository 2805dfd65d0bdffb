# Maps each distinct word's key to a one-hot vector (W_k), then points the query of "sat" at cat's and mat's.
words = ["the", "gray", "cat", "sat", "on", "mat"]
distinct = np.stack([E[[t.lower() for t in tokens].index(w)] for w in words])  # (6, 8)
W_k_design = np.linalg.pinv(distinct) @ np.eye(6, 8)  # distinct @ W_k = one-hot rows
target = 12.0 * (np.eye(8)[words.index("cat")] + np.eye(8)[words.index("mat")])
W_q_design = np.outer(E[SAT], target) / (E[SAT] @ E[SAT])
