# Forgets the D term of the softmax's backward pass: dS = P * dP instead of P * (dP - rowsum(P * dP)).
# replace: dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))
# with: dS = P * dP
