# Moves the axis last, loops over the slices in Python, and warns through a helper of its own (a UserWarning).
import warnings


def note(message):
    warnings.warn(f"numerical note: {message}")


def softmax(x, axis=-1):
    x = np.moveaxis(np.asarray(x, dtype=float), axis, -1)
    out = np.zeros_like(x)
    for index in np.ndindex(*x.shape[:-1]):
        row = x[index]
        if np.all(np.isneginf(row)):
            note("a slice of only -inf gets zero weights")
            continue
        e = np.exp(row - row.max())
        out[index] = e / e.sum()
    return np.moveaxis(out, -1, axis)
