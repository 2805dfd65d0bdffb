# Uses phi = relu instead of elu + 1: zero features for negative inputs (and 0 / 0 where a query meets only zeros).
# replace: phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
# with: phi_q, phi_k = F.relu(q), F.relu(k)
# replace: phi_q, phi_k = F.elu(q[..., i, :]) + 1, F.elu(k[..., i, :]) + 1
# with: phi_q, phi_k = F.relu(q[..., i, :]), F.relu(k[..., i, :])
