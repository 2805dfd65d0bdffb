# Does not handle a query with no allowed key: its maximum is -inf, and -inf - (-inf) and 0 / 0 give NaN.
# replace: row_max = np.where(np.isfinite(row_max), row_max, 0.0)
# with: row_max = row_max
# replace: P = weights / np.where(total > 0, total, 1.0)
# with: P = weights / total
