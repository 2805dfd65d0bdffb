# One query at a time, in plain Python: D_i = sum over features c of dO[i, c] * O[i, c].
def output_row_sums(output, dO):
    D = []
    for out_row, grad_row in zip(output, dO):
        D.append(sum(float(o) * float(g) for o, g in zip(out_row, grad_row)))
    return np.array(D)
