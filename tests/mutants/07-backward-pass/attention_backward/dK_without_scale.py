# Leaves the 1/sqrt(d) scale out of dK (dQ keeps it).
# replace: return dS @ K * scale, dS.T @ Q * scale, dV
# with: return dS @ K * scale, dS.T @ Q, dV
