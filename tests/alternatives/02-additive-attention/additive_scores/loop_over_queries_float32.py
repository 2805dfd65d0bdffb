# Loops over the queries, one row of scores at a time, in float32.
def additive_scores(queries, keys, W_q, W_k, w_v):
    keys_h = np.asarray(keys, dtype=np.float32) @ np.asarray(W_k, dtype=np.float32)
    rows = []
    for q in np.asarray(queries, dtype=np.float32):
        rows.append(np.tanh(q @ np.asarray(W_q, dtype=np.float32) + keys_h) @ np.asarray(w_v, dtype=np.float32))
    return np.stack(rows)
