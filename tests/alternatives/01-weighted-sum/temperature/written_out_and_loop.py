# Writes the limits out by hand as lists of fractions and measures with a loop that stacks the rows.
limit_cold = [0, 1 / 2, 0, 1 / 2, 0]
limit_hot = [1 / 5] * 5
rows = []
for T in temperatures:
    rows.append(softmax(scores / T))
weights_by_temperature = np.vstack(rows)
