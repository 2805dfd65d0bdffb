# Gives W_q and W_k a bias, which the contract (and the weight loading) does not have.
# replace: nn.Linear(query_dim, hidden_dim, bias=False)
# with: nn.Linear(query_dim, hidden_dim, bias=True)
# replace: nn.Linear(key_dim, hidden_dim, bias=False)
# with: nn.Linear(key_dim, hidden_dim, bias=True)
