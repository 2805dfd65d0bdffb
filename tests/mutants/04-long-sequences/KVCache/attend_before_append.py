# Attends before adding the current token: token t never sees itself (and token 0 sees nothing).
# replace:         cache.append(x @ W_k, x @ W_v)\n        outputs.append(cache.attend(x @ W_q))
# with:         outputs.append(cache.attend(x @ W_q) if len(cache) else np.zeros(W_v.shape[1]))\n        cache.append(x @ W_k, x @ W_v)
