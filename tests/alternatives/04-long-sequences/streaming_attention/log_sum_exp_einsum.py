# Keeps a running log-sum-exp per query (np.logaddexp) instead of a maximum and a normaliser; einsum for the chunks.
def streaming_attention(Q, K, V, chunk_size):
    lse = np.full(Q.shape[0], -np.inf)
    out = np.zeros((Q.shape[0], V.shape[1]))
    for start in range(0, len(K), chunk_size):
        s = np.einsum("md,nd->mn", Q, K[start:start + chunk_size]) / np.sqrt(Q.shape[1])
        chunk_top = s.max(axis=1)
        chunk_lse = chunk_top + np.log(np.exp(s - chunk_top[:, None]).sum(axis=1))
        new_lse = np.logaddexp(lse, chunk_lse)
        out = out * np.exp(lse - new_lse)[:, None] + np.einsum("mn,nv->mv", np.exp(s - new_lse[:, None]), V[start:start + chunk_size])
        lse = new_lse
    return out
