# Returns the (n, m) transpose: keys on the rows.
def additive_scores(queries, keys, W_q, W_k, w_v):
    hidden = (np.asarray(queries) @ W_q)[None, :, :] + (np.asarray(keys) @ W_k)[:, None, :]
    return np.tanh(hidden) @ w_v
