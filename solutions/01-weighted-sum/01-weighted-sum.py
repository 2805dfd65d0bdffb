# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false}
# # Exercise 1: attention is a weighted sum
#
# In this notebook you build attention pooling from scratch in NumPy, one small
# function at a time, and use it for kernel regression:
#
# | # | you build | points |
# |---|---|---|
# | 1 | `softmax(x, axis=-1)`, numerically stable, with `-inf` entries | 4 |
# | 2 | `weighted_average(weights, values)` | 2 |
# | 3 | `dot_scores(queries, keys)` | 2 |
# | 4 | `cosine_scores(queries, keys)` | 3 |
# | 5 | `gaussian_scores(queries, keys, bandwidth)` | 2 |
# | 6 | `attention_pool(queries, keys, values, score_fn)` | 3 |
# | 7 | `nadaraya_watson(x_query, x_train, y_train, bandwidth)` | 3 |
# | 8 | predict, then measure, the effect of temperature | 2 |
# | 9 | choose a bandwidth and justify it with a number | 2 |
# | | **total** | **23** |
#
# **How to work.** Replace every `raise NotImplementedError()` with your code.
# Do not rename the functions or change their arguments: the grader calls them
# by name. Do not edit or delete the test cells; the grader puts back its own
# copy of each of them anyway.
#
# **How it is graded.** Each exercise is followed by test cells. The visible
# ones check the shape of your result and one worked example; run them to
# check yourself. Grading adds hidden tests to the cells marked *hidden tests*:
# properties, edge cases (very large inputs, `-inf`, zero vectors, batch axes)
# and agreement with an independent computation. A test cell earns its points
# when it runs without an error. When a test fails, its message says what is
# wrong.
#
# **Fair grading.** The values decide: a warning your code raises costs no
# points (when a value is wrong, the test names the warning, which is often
# the clue). Answers in float32 are compared at float32's precision, float64
# ones at about 1e-8. Where your answer calls your function from an earlier
# exercise and only that function is wrong, the test runs again with a correct
# version of it, so each mistake costs its points once. The names
# `expect_shape`, `expect_close`, `recorded_warnings` and `retry_with_reference`
# belong to the tests: do not define your own with these names.
#
# **Conventions.** Arrays are NumPy arrays of floats. For scores and weights the
# last two axes are (queries, keys); for queries, keys and values they are
# (tokens, features). The whole notebook runs in a few seconds on one CPU core
# and needs only NumPy (and Matplotlib for the optional plots).

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import contextlib
import warnings

import numpy as np

# What a warning usually means, for the messages of failed tests.
WARNING_CLUES = {
    "overflow encountered in exp": "exp of a large score overflows to inf: subtract the largest score first",
    "invalid value encountered in subtract": "inf - inf is nan: a slice whose entries are all -inf minus its maximum (-inf)",
    "invalid value encountered in divide": "0 / 0 is nan. Note that np.where(cond, a / b, 0) computes a / b everywhere; "
                                           "use np.divide(a, b, out=..., where=...) or np.errstate",
    "divide by zero": "a division by zero (a zero norm or a zero sum)",
    "overflow encountered in cast": "a value too large for the dtype it was cast to (float32 holds at most 3.4e38)",
}


@contextlib.contextmanager
def recorded_warnings():
    """Record the warnings raised inside the `with` block instead of printing them (a warning costs no points)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def _warning_note(warned):
    """What the recorded warnings say, for a failure message ('' if there were none)."""
    if not warned:
        return ""
    text = str(warned[0].message)
    clue = next((c for key, c in WARNING_CLUES.items() if key in text), "")
    return f" Your code also warned: {warned[0].category.__name__}: {text}" + (f" ({clue})." if clue else ".")


def expect_shape(actual, shape, what):
    """Fail with a readable message unless `actual` has shape `shape`."""
    actual = np.asarray(actual)
    assert actual.shape == tuple(shape), (
        f"{what} should have shape {tuple(shape)}, but it has shape {actual.shape}."
    )


def expect_close(actual, expected, what, atol=1e-8, rtol=1e-6, warned=()):
    """Fail with a readable message unless `actual` matches `expected` entry by entry.

    A float32 (or float16) answer is compared at its own precision. `warned`
    holds the warnings recorded while `actual` was computed: they cost nothing,
    but a failure message names them.
    """
    actual = np.asarray(actual)
    if actual.dtype.kind == "f" and actual.dtype.itemsize < 8:
        atol, rtol = max(atol, 1e-5), max(rtol, 1e-4)
    actual = np.asarray(actual, dtype=float)
    expected = np.asarray(expected, dtype=float)
    expect_shape(actual, expected.shape, what)
    nan = np.isnan(actual) & ~np.isnan(expected)
    if nan.any():
        idx = tuple(int(i) for i in np.argwhere(nan)[0])
        raise AssertionError(
            f"{what} contains NaN (not a number), first at index {idx}; expected "
            f"{expected[idx]:.6g}. NaN usually comes from inf - inf, 0 / 0 or 0 * inf." + _warning_note(warned)
        )
    bad = ~np.isclose(actual, expected, atol=atol, rtol=rtol, equal_nan=True)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        nearly = np.allclose(actual, expected, atol=1e-5, rtol=1e-4, equal_nan=True)
        raise AssertionError(
            f"{what} is wrong at index {idx}: expected {expected[idx]:.6g}, got "
            f"{actual[idx]:.6g} ({int(bad.sum())} of {bad.size} entries differ)."
            + (" Your values agree only to about 1e-5, as float32 arithmetic does: compute in float64, "
               "or return float32 (float32 answers are compared at float32's precision)." if nearly else "")
            + _warning_note(warned)
        )


def retry_with_reference(check, references):
    """Run `check()`; if it fails, run it again with `references` in place of your functions of those names.

    `references` maps names of earlier exercises' functions (which your answer
    may call) to correct versions. The grader fills it in; in your copy it is
    empty, and the test simply runs. If the test passes with them, the mistake
    is in the earlier exercise, which has already cost its points there.
    """
    try:
        check()
        return
    except Exception as error:  # not BaseException: a timeout must still stop the cell
        first = error
    if not references:
        raise first
    namespace = globals()
    missing = object()
    saved = {name: namespace.get(name, missing) for name in references}
    namespace.update(references)
    try:
        check()
        passed = True
    except Exception:
        passed = False
    finally:
        for name, value in saved.items():
            if value is missing:
                namespace.pop(name, None)
            else:
                namespace[name] = value
    if not passed:
        raise first
    print(f"Passed with a correct {' and '.join(references)} in place of yours: your answer here is right, "
          f"and the mistake ({type(first).__name__}: {str(first).splitlines()[0] if str(first) else ''}) "
          "lies in that earlier exercise.")

# %% [markdown] nbgrader={"grade": false, "grade_id": "softmax_md", "locked": true, "schema_version": 3, "solution": false}
# ## 1. Softmax (4 points)
#
# Softmax turns a vector of real scores $\mathbf{s} \in \mathbb{R}^n$ into
# weights that are positive and sum to one:
#
# $$\operatorname{softmax}(\mathbf{s})_j = \frac{\exp(s_j)}{\sum_{l=1}^{n} \exp(s_l)}.$$
#
# Write `softmax(x, axis=-1)` that applies it along `axis` of an array of any
# shape (every other axis is a batch axis) and returns an array of the same
# shape. It must
#
# - be numerically stable: `softmax(np.array([1e4, 0.0]))` is `[1, 0]`, not
#   `nan` (hint: $\operatorname{softmax}(\mathbf{s}) = \operatorname{softmax}(\mathbf{s} - c)$
#   for any constant $c$);
# - accept `-inf` entries, which get weight exactly 0 (this is how a key is
#   masked out later in the course);
# - return all zeros for a slice whose entries are all `-inf` (a query that may
#   attend to nothing gets no weight at all, never `nan`).
#
# Warnings cost no points, but an `overflow` or `invalid value` warning from
# NumPy usually means that some value is wrong: the tests name it when they fail.

# %% nbgrader={"grade": false, "grade_id": "softmax", "locked": false, "schema_version": 3, "solution": true}
def softmax(x, axis=-1):
    """Softmax of `x` along `axis`; any shape in, the same shape out."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    shift = np.max(x, axis=axis, keepdims=True)
    # A slice of only -inf has max -inf; shifting by it would give inf - inf = nan.
    shift = np.where(np.isfinite(shift), shift, 0.0)
    e = np.exp(x - shift)
    total = np.sum(e, axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_softmax", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: shape and one worked example.
w = softmax(np.array([1.0, 2.0, 3.0]))
expect_shape(w, (3,), "softmax([1, 2, 3])")
expect_close(w, [0.09003057, 0.24472847, 0.66524096], "softmax([1, 2, 3])")
w = softmax(np.zeros((2, 4)))
expect_close(w, np.full((2, 4), 0.25), "softmax of a (2, 4) array of zeros (each row should be uniform)")

# %% nbgrader={"grade": true, "grade_id": "test_softmax_stability", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: very large and very negative inputs must neither overflow nor underflow.
### BEGIN HIDDEN TESTS
def _softmax_oracle(x, axis=-1):
    """The tests' own softmax, for tests of later exercises whose answers call softmax."""
    x = np.asarray(x, dtype=float)
    shift = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(shift), shift, 0.0))
    total = np.sum(e, axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


# Every input below is exact in float32 too, so a float32 softmax is held to the same values.
for big in (1e3, 1e4, 1e30):
    with recorded_warnings() as warned:
        got = softmax(np.array([big, 0.0, -big]))
    expect_close(got, [1.0, 0.0, 0.0], f"softmax([{big:g}, 0, -{big:g}]) (subtract the maximum before exp)", warned=warned)
with recorded_warnings() as warned:
    got = softmax(np.array([1e4, 1e4]))
expect_close(got, [0.5, 0.5], "softmax([1e4, 1e4])", warned=warned)
with recorded_warnings() as warned:
    got = softmax(np.array([-1e4, -1e4 + 2.0]))
expect_close(got, [0.11920292, 0.88079708],
             "softmax([-1e4, -1e4 + 2]) (very negative scores must not underflow to 0 / 0)", warned=warned)
with recorded_warnings() as warned:
    shifted = softmax(np.array([0.5, -1.0, 2.0]) + 1234.5)
expect_close(shifted, [0.17529039, 0.03911257, 0.78559703],
             "softmax(s + 1234.5) (adding a constant to every score must not change the weights)", warned=warned)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_softmax_masking", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: -inf entries get weight 0; an all -inf slice gives zeros, not nan.
### BEGIN HIDDEN TESTS
with recorded_warnings() as warned:
    got = softmax(np.array([0.0, -np.inf, np.log(3.0)]))
expect_close(got, [0.25, 0.0, 0.75], "softmax([0, -inf, log 3]) (a -inf score must get weight exactly 0)", warned=warned)
with recorded_warnings() as warned:
    got = softmax(np.array([[1.0, 2.0], [-np.inf, -np.inf]]))
expect_close(got[1], [0.0, 0.0], "softmax of a row that is all -inf (a query with nothing to attend to gets "
             "all-zero weights, not nan)", warned=warned)
expect_close(got[0], [0.26894142, 0.73105858], "softmax of row 0 when row 1 is all -inf (rows must not influence "
             "each other)", warned=warned)
with recorded_warnings() as warned:
    got = softmax(np.full((3, 5), -np.inf))
expect_close(got, np.zeros((3, 5)), "softmax of a (3, 5) array of -inf", warned=warned)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_softmax_axes", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: the axis argument, batch axes, and agreement with torch.softmax.
### BEGIN HIDDEN TESTS
import torch

rng = np.random.default_rng(0)
x = rng.normal(scale=3.0, size=(2, 3, 4, 5))
for axis in (-1, 0, 1, 2, 3, -2):
    got = softmax(x, axis=axis)
    expect_shape(got, x.shape, f"softmax(x, axis={axis}) for x of shape {x.shape}")
    sums = np.sum(got, axis=axis)
    assert np.allclose(sums, 1.0), (
        f"softmax(x, axis={axis}) must sum to 1 along axis {axis}; a slice sums to "
        f"{sums.flat[np.argmax(np.abs(sums - 1))]:.4g}. Did you normalise over another axis?"
    )
    oracle = torch.softmax(torch.from_numpy(x), dim=axis).numpy()
    expect_close(got, oracle, f"softmax(x, axis={axis}) compared with torch.softmax")
expect_close(softmax(x), softmax(x, axis=-1), "softmax(x) (the default axis must be -1)")
got = softmax(np.array([[3.0]]))
expect_close(got, [[1.0]], "softmax of a single score")
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "weighted_average_md", "locked": true, "schema_version": 3, "solution": false}
# ## 2. Weighted average (2 points)
#
# Given weights $\alpha_j$ over $n$ values $\mathbf{v}_j \in \mathbb{R}^d$, the
# pooled vector is $\sum_{j=1}^{n} \alpha_j \mathbf{v}_j$.
#
# Write `weighted_average(weights, values)` with `weights` of shape `(..., n)`
# (any number of leading batch axes, e.g. one row per query) and `values` of
# shape `(n, d)`; it returns shape `(..., d)`. Do **not** divide by the sum of
# the weights: they come from softmax and already sum to 1, and a row of all-zero
# weights (a query that attends to nothing) must give a zero vector.

# %% nbgrader={"grade": false, "grade_id": "weighted_average", "locked": false, "schema_version": 3, "solution": true}
def weighted_average(weights, values):
    """sum_j weights[..., j] * values[j]: (..., n), (n, d) -> (..., d)."""
    ### BEGIN SOLUTION
    return np.asarray(weights, dtype=float) @ np.asarray(values, dtype=float)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_weighted_average", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: shape and one worked example.
values = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
got = weighted_average(np.array([0.5, 0.25, 0.25]), values)
expect_shape(got, (2,), "weighted_average(weights (3,), values (3, 2))")
expect_close(got, [1.0, 0.75], "weighted_average([0.5, 0.25, 0.25], values)")

# %% nbgrader={"grade": true, "grade_id": "test_weighted_average_batch", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: batch axes, zero weights, and a brute-force loop as the reference.
### BEGIN HIDDEN TESTS
def _weighted_average_oracle(weights, values):
    """The tests' own weighted average, for tests of later exercises whose answers call weighted_average."""
    return np.einsum("...n,nd->...d", np.asarray(weights, dtype=float), np.asarray(values, dtype=float))


rng = np.random.default_rng(1)
values = rng.normal(size=(5, 3))
weights = rng.dirichlet(np.ones(5), size=(2, 4))  # shape (2, 4, 5), rows sum to 1
got = weighted_average(weights, values)
expect_shape(got, (2, 4, 3), "weighted_average(weights (2, 4, 5), values (5, 3))")
oracle = np.zeros((2, 4, 3))
for b in range(2):
    for i in range(4):
        for j in range(5):
            oracle[b, i] += weights[b, i, j] * values[j]
expect_close(got, oracle, "weighted_average with batch axes (2, 4)")
got = weighted_average(np.zeros((2, 5)), values)
expect_close(got, np.zeros((2, 3)), "weighted_average of all-zero weights (must be a zero vector, do not divide by the sum of weights)")
got = weighted_average(np.array([2.0, 0.0, 0.0, 0.0, 0.0]), values)
expect_close(got, 2.0 * values[0], "weighted_average([2, 0, 0, 0, 0], values) (weights are used as given, not renormalised)")
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "scores_md", "locked": true, "schema_version": 3, "solution": false}
# ## 3–5. Three similarity scores
#
# A score function compares every query with every key. For queries
# $Q \in \mathbb{R}^{m \times d}$ (one per row) and keys $K \in \mathbb{R}^{n \times d}$
# it returns a score matrix $S \in \mathbb{R}^{m \times n}$ whose entry $s_{ij}$
# says how well query $i$ matches key $j$. Write each one without Python loops.
#
# **3. Dot product (2 points).** $s_{ij} = \mathbf{q}_i \cdot \mathbf{k}_j$.

# %% nbgrader={"grade": false, "grade_id": "dot_scores", "locked": false, "schema_version": 3, "solution": true}
def dot_scores(queries, keys):
    """Dot-product scores: queries (m, d), keys (n, d) -> (m, n)."""
    ### BEGIN SOLUTION
    return np.asarray(queries, dtype=float) @ np.asarray(keys, dtype=float).T
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_dot_scores", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: shape and one worked example.
queries = np.array([[1.0, 0.0], [1.0, 2.0]])
keys = np.array([[1.0, 1.0], [0.0, 3.0], [-1.0, 0.0]])
got = dot_scores(queries, keys)
expect_shape(got, (2, 3), "dot_scores(queries (2, 2), keys (3, 2))")
expect_close(got, [[1.0, 0.0, -1.0], [3.0, 6.0, -1.0]], "dot_scores(queries, keys)")

# %% nbgrader={"grade": true, "grade_id": "test_dot_scores_oracle", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: random shapes against a brute-force loop; no scaling.
### BEGIN HIDDEN TESTS
rng = np.random.default_rng(2)
for m, n, d in [(1, 1, 1), (4, 7, 3), (6, 2, 16)]:
    q, k = rng.normal(size=(m, d)), rng.normal(size=(n, d))
    oracle = np.array([[sum(q[i, t] * k[j, t] for t in range(d)) for j in range(n)] for i in range(m)])
    expect_close(dot_scores(q, k), oracle, f"dot_scores for queries ({m}, {d}) and keys ({n}, {d}) (row i, column j is q_i . k_j; no scaling)")
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "cosine_md", "locked": true, "schema_version": 3, "solution": false}
# **4. Cosine similarity (3 points).**
# $s_{ij} = \dfrac{\mathbf{q}_i \cdot \mathbf{k}_j}{\lVert \mathbf{q}_i \rVert \, \lVert \mathbf{k}_j \rVert}$,
# which lies in $[-1, 1]$ and ignores the lengths of the vectors. A zero vector
# has no direction: define its similarity with everything as 0 (never `nan`).

# %% nbgrader={"grade": false, "grade_id": "cosine_scores", "locked": false, "schema_version": 3, "solution": true}
def cosine_scores(queries, keys):
    """Cosine similarity: queries (m, d), keys (n, d) -> (m, n); zero vectors score 0."""
    ### BEGIN SOLUTION
    def unit(x):
        x = np.asarray(x, dtype=float)
        norm = np.linalg.norm(x, axis=-1, keepdims=True)
        return np.divide(x, norm, out=np.zeros_like(x), where=norm > 0)

    return unit(queries) @ unit(keys).T
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_cosine_scores", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: shape and one worked example.
queries = np.array([[3.0, 0.0], [1.0, 1.0]])
keys = np.array([[2.0, 0.0], [0.0, 5.0], [-1.0, -1.0]])
got = cosine_scores(queries, keys)
expect_shape(got, (2, 3), "cosine_scores(queries (2, 2), keys (3, 2))")
expect_close(got, [[1.0, 0.0, -0.70710678], [0.70710678, 0.70710678, -1.0]], "cosine_scores(queries, keys)")

# %% nbgrader={"grade": true, "grade_id": "test_cosine_scores_oracle", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: a brute-force reference, and invariance to the lengths of queries and keys.
### BEGIN HIDDEN TESTS
rng = np.random.default_rng(3)
q, k = rng.normal(size=(4, 5)), rng.normal(size=(6, 5))
oracle = np.array([[q[i] @ k[j] / np.sqrt((q[i] @ q[i]) * (k[j] @ k[j])) for j in range(6)] for i in range(4)])
expect_close(cosine_scores(q, k), oracle, "cosine_scores of random queries (4, 5) and keys (6, 5) (divide by the norm "
             "of each query and of each key)")
scaled = cosine_scores(q * np.array([[2.0], [0.1], [7.0], [1.0]]), k * 3.0)
expect_close(scaled, oracle, "cosine_scores after scaling each query and key by a positive number (cosine ignores length)")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_cosine_scores_zero_vectors", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: a zero query or key has similarity 0 with everything (not nan).
### BEGIN HIDDEN TESTS
with recorded_warnings() as warned:
    got = cosine_scores(np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([[1.0, 1.0], [0.0, 0.0]]))
expect_close(got, [[0.0, 0.0], [0.70710678, 0.0]], "cosine_scores with a zero query (row 0) and a zero key "
             "(column 1): a zero vector has similarity 0 with everything", warned=warned)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "gaussian_md", "locked": true, "schema_version": 3, "solution": false}
# **5. Gaussian kernel (2 points).** With a bandwidth $\sigma > 0$,
#
# $$s_{ij} = -\frac{\lVert \mathbf{q}_i - \mathbf{k}_j \rVert^2}{2\sigma^2}.$$
#
# This is the logarithm of the (unnormalised) Gaussian kernel: after softmax,
# the weights are proportional to $\exp(-\lVert \mathbf{q}_i - \mathbf{k}_j \rVert^2 / 2\sigma^2)$.
# Hint: broadcasting `queries[:, None, :] - keys[None, :, :]` gives all
# differences at once, with shape `(m, n, d)`.

# %% nbgrader={"grade": false, "grade_id": "gaussian_scores", "locked": false, "schema_version": 3, "solution": true}
def gaussian_scores(queries, keys, bandwidth):
    """-||q_i - k_j||^2 / (2 bandwidth^2): queries (m, d), keys (n, d) -> (m, n)."""
    ### BEGIN SOLUTION
    diff = np.asarray(queries, dtype=float)[:, None, :] - np.asarray(keys, dtype=float)[None, :, :]
    return -np.sum(diff**2, axis=-1) / (2.0 * bandwidth**2)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_gaussian_scores", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: shape and one worked example.
queries = np.array([[0.0, 0.0]])
keys = np.array([[0.0, 0.0], [3.0, 4.0]])
got = gaussian_scores(queries, keys, bandwidth=1.0)
expect_shape(got, (1, 2), "gaussian_scores(queries (1, 2), keys (2, 2), 1.0)")
expect_close(got, [[0.0, -12.5]], "gaussian_scores(queries, keys, bandwidth=1.0)")

# %% nbgrader={"grade": true, "grade_id": "test_gaussian_scores_oracle", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: several bandwidths and shapes against a brute-force loop.
### BEGIN HIDDEN TESTS
def _gaussian_scores_oracle(queries, keys, bandwidth):
    """The tests' own Gaussian score, for tests of later exercises whose answers call gaussian_scores."""
    queries, keys = np.asarray(queries, dtype=float), np.asarray(keys, dtype=float)
    return -((queries[:, None, :] - keys[None, :, :]) ** 2).sum(axis=-1) / (2.0 * bandwidth**2)


rng = np.random.default_rng(4)
for bandwidth in (0.1, 0.5, 1.0, 3.0):
    q, k = rng.normal(size=(3, 4)), rng.normal(size=(5, 4))
    oracle = np.array([[-sum((q[i, t] - k[j, t]) ** 2 for t in range(4)) / (2 * bandwidth * bandwidth) for j in range(5)] for i in range(3)])
    expect_close(gaussian_scores(q, k, bandwidth), oracle, f"gaussian_scores with bandwidth {bandwidth} (squared distance over 2 * bandwidth ** 2, negated)")
got = gaussian_scores(np.array([[1.0]]), np.array([[1.0], [2.0]]), 2.0)
expect_close(got, [[0.0, -0.125]], "gaussian_scores in one dimension with bandwidth 2")
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "attention_pool_md", "locked": true, "schema_version": 3, "solution": false}
# ## 6. Attention pooling (3 points)
#
# Put the pieces together. For queries $Q$ `(m, d)`, keys $K$ `(n, d)`, values
# $V$ `(n, d_v)` and a score function, attention pooling computes
#
# $$A = \operatorname{softmax}(\text{score\_fn}(Q, K)) \in \mathbb{R}^{m \times n}
# \quad\text{(softmax over the keys, i.e. along each row)},\qquad
# \text{output} = A V \in \mathbb{R}^{m \times d_v}.$$
#
# Write `attention_pool(queries, keys, values, score_fn)` returning the tuple
# `(output, weights)`, using your `softmax` and `weighted_average`. `score_fn`
# is any function like `dot_scores`, called as `score_fn(queries, keys)`; to
# pass `gaussian_scores`, fix its bandwidth first, e.g.
# `lambda queries, keys: gaussian_scores(queries, keys, 0.5)`.

# %% nbgrader={"grade": false, "grade_id": "attention_pool", "locked": false, "schema_version": 3, "solution": true}
def attention_pool(queries, keys, values, score_fn):
    """Attention pooling: (m, d), (n, d), (n, d_v) -> (output (m, d_v), weights (m, n))."""
    ### BEGIN SOLUTION
    weights = softmax(score_fn(queries, keys), axis=-1)
    return weighted_average(weights, values), weights
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_attention_pool", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: shapes and one worked example (with its own dot product as the score function).
def check_attention_pool():
    queries = np.array([[0.0, 0.0], [1.0, 0.0]])
    keys = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, np.log(2.0)]])
    values = np.array([[1.0], [2.0], [4.0]])
    output, weights = attention_pool(queries, keys, values, lambda queries, keys: queries @ keys.T)
    expect_shape(output, (2, 1), "the output of attention_pool (queries (2, 2), values (3, 1))")
    expect_shape(weights, (2, 3), "the weights of attention_pool (2 queries, 3 keys)")
    expect_close(weights[0], [1 / 3, 1 / 3, 1 / 3], "weights for query 0 (all its dot products are 0, so uniform)")
    expect_close(output[0], [7 / 3], "output for query 0 (the plain average of the values)")


references = {}  # the grader puts correct versions of softmax and weighted_average here
### BEGIN HIDDEN TESTS
references = {"softmax": _softmax_oracle, "weighted_average": _weighted_average_oracle}
### END HIDDEN TESTS
retry_with_reference(check_attention_pool, references)

# %% nbgrader={"grade": true, "grade_id": "test_attention_pool_properties", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden tests: rows of weights sum to 1 over the keys; any score function; agreement with a direct computation.
### BEGIN HIDDEN TESTS
def _attention_pool_oracle(queries, keys, values, score_fn):
    """The tests' own attention pooling, for tests of later exercises whose answers call attention_pool."""
    weights = _softmax_oracle(score_fn(queries, keys), axis=-1)
    return weights @ np.asarray(values, dtype=float), weights


def check_attention_pool_properties():
    rng = np.random.default_rng(5)
    q, k, v = rng.normal(size=(4, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    score_fns = [("dot products", lambda queries, keys: queries @ keys.T),
                 ("a Gaussian kernel", lambda queries, keys: -((queries[:, None] - keys[None]) ** 2).sum(-1) / 0.5)]
    for name, fn in score_fns:
        output, weights = attention_pool(q, k, v, fn)
        expect_shape(weights, (4, 6), f"weights with {name}")
        expect_shape(output, (4, 2), f"output with {name}")
        sums = np.sum(weights, axis=-1)
        assert np.allclose(sums, 1.0), (
            f"each row of weights must sum to 1 over the keys (last axis); with {name}, row "
            f"{int(np.argmax(np.abs(sums - 1)))} sums to {sums[np.argmax(np.abs(sums - 1))]:.4g}.")
        s = fn(q, k)
        e = np.exp(s - s.max(axis=1, keepdims=True))
        oracle_w = e / e.sum(axis=1, keepdims=True)
        expect_close(weights, oracle_w, f"weights with {name} (softmax of score_fn(queries, keys) over the keys)")
        expect_close(output, oracle_w @ v, f"output with {name} (weights @ values)")
    # Values that do not match the key dimension: d_v differs from d.
    output, weights = attention_pool(q, k, rng.normal(size=(6, 5)), lambda queries, keys: queries @ keys.T)
    expect_shape(output, (4, 5), "output when values have 5 features and keys 3")


retry_with_reference(check_attention_pool_properties, {"softmax": _softmax_oracle, "weighted_average": _weighted_average_oracle})
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "nw_md", "locked": true, "schema_version": 3, "solution": false}
# ## 7. Nadaraya–Watson kernel regression (3 points)
#
# Given training points $(x_j, y_j)$, $j = 1..n$, Nadaraya (1964) and Watson
# (1964) estimate $f(x)$ at a query $x$ by a weighted average of the $y_j$, with
# weights given by a kernel of the distance $x - x_j$:
#
# $$\hat f(x) = \sum_{j=1}^{n} \frac{\kappa\!\left(\frac{x - x_j}{\sigma}\right)}{\sum_{l=1}^{n} \kappa\!\left(\frac{x - x_l}{\sigma}\right)}\, y_j,
# \qquad \kappa(u) = \exp(-u^2 / 2),$$
#
# with the Gaussian kernel $\kappa$ and the bandwidth $\sigma$ (the argument
# `bandwidth`). This is attention pooling: the query is $x$, the keys are the
# $x_j$, the values the $y_j$, and the score is the Gaussian score of exercise
# 5. Write
# `nadaraya_watson(x_query, x_train, y_train, bandwidth)` for 1-D arrays of
# shapes `(m,)`, `(n,)`, `(n,)`, returning `(m,)`, by calling `attention_pool`
# (reshape the 1-D arrays to `(m, 1)` and `(n, 1)`).

# %% nbgrader={"grade": false, "grade_id": "nadaraya_watson", "locked": false, "schema_version": 3, "solution": true}
def nadaraya_watson(x_query, x_train, y_train, bandwidth):
    """Kernel regression: x_query (m,), x_train (n,), y_train (n,) -> (m,)."""
    ### BEGIN SOLUTION
    x_query = np.asarray(x_query, dtype=float).reshape(-1, 1)
    x_train = np.asarray(x_train, dtype=float).reshape(-1, 1)
    y_train = np.asarray(y_train, dtype=float).reshape(-1, 1)
    output, _ = attention_pool(x_query, x_train, y_train, lambda q, k: gaussian_scores(q, k, bandwidth))
    return output[:, 0]
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_nadaraya_watson", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: shape and one worked example.
# At x = 0 the weights are proportional to exp(0) = 1 and exp(-1/2); halfway, at x = 0.5, they are equal.
def check_nadaraya_watson():
    got = nadaraya_watson(np.array([0.0, 0.5]), np.array([0.0, 1.0]), np.array([1.0, 3.0]), 1.0)
    expect_shape(got, (2,), "nadaraya_watson with 2 queries")
    expect_close(got, [1.75508134, 2.0], "nadaraya_watson([0, 0.5], x_train=[0, 1], y_train=[1, 3], bandwidth=1)")


references = {}  # the grader puts correct versions of the functions of exercises 1, 2, 5 and 6 here
### BEGIN HIDDEN TESTS
references = {"softmax": _softmax_oracle, "weighted_average": _weighted_average_oracle,
              "gaussian_scores": _gaussian_scores_oracle, "attention_pool": _attention_pool_oracle}
### END HIDDEN TESTS
retry_with_reference(check_nadaraya_watson, references)

# %% nbgrader={"grade": true, "grade_id": "test_nadaraya_watson_oracle", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden tests: several bandwidths against the textbook formula; limits of tiny and huge bandwidths.
### BEGIN HIDDEN TESTS
def _nadaraya_watson_oracle(x_query, x_train, y_train, bandwidth):
    """The tests' own kernel regression, for tests of later exercises whose answers call nadaraya_watson."""
    x_query, x_train, y_train = (np.asarray(a, dtype=float) for a in (x_query, x_train, y_train))
    logits = -(((x_query[:, None] - x_train[None, :]) / bandwidth) ** 2) / 2
    kernel = np.exp(logits - logits.max(axis=1, keepdims=True))
    return kernel @ y_train / kernel.sum(axis=1)


def check_nadaraya_watson_oracle():
    rng = np.random.default_rng(6)
    x_train = np.sort(rng.uniform(0, 5, size=20))
    y_train = 2 * np.sin(x_train) + x_train**0.8 + rng.normal(scale=0.5, size=20)
    x_query = np.linspace(0, 5, 11)
    for bandwidth in (0.2, 0.5, 1.0, 2.0):
        oracle = []
        for x in x_query:
            kern = np.array([np.exp(-((x - xj) / bandwidth) ** 2 / 2) for xj in x_train])
            oracle.append(kern @ y_train / kern.sum())
        expect_close(nadaraya_watson(x_query, x_train, y_train, bandwidth), oracle,
                     f"nadaraya_watson with bandwidth {bandwidth} (kernel exp(-(x - x_j)^2 / (2 bandwidth^2)), "
                     "normalised over the training points)")
    got = nadaraya_watson(x_train[:3], x_train, y_train, 1e-3)
    expect_close(got, y_train[:3], "nadaraya_watson at training inputs with a tiny bandwidth (should return the "
                 "training targets)", atol=1e-6)
    got = nadaraya_watson(x_query, x_train, y_train, 1e4)
    expect_close(got, np.full(11, y_train.mean()), "nadaraya_watson with a huge bandwidth (should return the mean "
                 "of y_train everywhere)", atol=1e-5)
    with recorded_warnings() as warned:
        got = nadaraya_watson(np.array([100.0]), x_train, y_train, 0.05)
    expect_close(got, [y_train[-1]], "nadaraya_watson far to the right of the data with a small bandwidth (nearest "
                 "point wins; scores are very negative, so softmax must be stable)", atol=1e-6, warned=warned)


retry_with_reference(check_nadaraya_watson_oracle, {
    "softmax": _softmax_oracle, "weighted_average": _weighted_average_oracle,
    "gaussian_scores": _gaussian_scores_oracle, "attention_pool": _attention_pool_oracle})
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "temperature_md", "locked": true, "schema_version": 3, "solution": false}
# ## 8. Predict, then measure: temperature (2 points)
#
# Dividing scores by a *temperature* $T > 0$ before softmax,
# $\operatorname{softmax}(\mathbf{s} / T)$, changes how peaked the weights are
# without changing their order.
#
# **First predict.** Without running anything, work out what the weights
# `softmax(scores / T)` of the `scores` below tend to as $T \to 0$ (from above)
# and as $T \to \infty$. Set `limit_cold` and `limit_hot` to NumPy arrays of
# the limit weights, one per score (the exact limits; the tests allow an error
# of `1e-6`).
#
# **Then measure.** Set `weights_by_temperature` to an array of shape
# `(len(temperatures), len(scores))` whose row `t` is
# `softmax(scores / temperatures[t])`, computed with your `softmax`. Compare its
# first and last rows with your predictions: if they disagree, find out which
# of the two is wrong.

# %% nbgrader={"grade": false, "grade_id": "temperature_setup", "locked": true, "schema_version": 3, "solution": false}
scores = np.array([1.0, 3.0, -0.5, 3.0, 2.5])
temperatures = np.array([0.01, 0.1, 0.5, 1.0, 2.0, 10.0, 100.0])

# %% nbgrader={"grade": false, "grade_id": "temperature", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
# The scores at indices 1 and 3 tie for the largest: their weights stay equal at every T, so as T -> 0 they share all of it.
is_max = scores == scores.max()
limit_cold = is_max / is_max.sum()
limit_hot = np.full(scores.shape, 1 / scores.size)
weights_by_temperature = np.array([softmax(scores / t) for t in temperatures])
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "test_temperature", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible and hidden tests: weights_by_temperature, its shape (visible) and its values (hidden).
### BEGIN HIDDEN TESTS
def _rerun_answer_with_references(names, references, probe):
    """Where your answer cell stopped before defining `names`, run it again with `references` in place of your functions.

    The measuring exercises call your earlier functions; when one of those raises (a softmax still raising
    NotImplementedError, say), the cell stops before it defines its answers. As retry_with_reference does for a
    wrong function, the answer cell (the last cell you ran that assigns one of `names`) runs again with the tests'
    correct versions in place of yours, so that the earlier mistake costs its points only in its own exercise.
    That happens once, and only when `probe()` finds your earlier function wrong (it raises or differs from ours).
    """
    import ast

    namespace = globals()
    missing = [name for name in names if name not in namespace]
    tried = _rerun_answer_with_references.__dict__.setdefault("tried", set())
    if not missing or tuple(names) in tried:
        return
    tried.add(tuple(names))
    try:
        earlier_is_wrong = probe()
    except Exception:
        earlier_is_wrong = True
    if not earlier_is_wrong:
        return  # your earlier function is right: the answer cell stopped for a reason of its own

    def assigns_one(source):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return False
        bound = {node.id for statement in tree.body if not isinstance(statement, (ast.FunctionDef, ast.ClassDef))
                 for node in ast.walk(statement) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
        return bool(bound & set(missing))

    answers = [source for source in list(namespace.get("_ih", []))[:-1] if isinstance(source, str) and assigns_one(source)]
    if not answers:
        return
    absent = object()
    saved = {name: namespace.get(name, absent) for name in references}
    namespace.update(references)  # your functions that call these (attention_pool calls softmax) find the correct ones
    scratch = dict(namespace)
    try:
        exec(compile(answers[-1], "<your answer cell>", "exec"), scratch)
        ran = True
    except Exception:
        ran = False  # it fails with correct functions too: the tests below say what is missing
    finally:
        for name, value in saved.items():
            if value is absent:
                namespace.pop(name, None)
            else:
                namespace[name] = value
    found = [name for name in missing if name in scratch]
    for name in found:
        namespace[name] = scratch[name]
    if ran and found:
        print(f"Your answer cell stopped before defining {', '.join(missing)}. Run again with a correct "
              f"{', '.join(references)} in place of yours, it defined them, and that is what is graded here: the "
              "mistake lies in an earlier exercise, which costs its points there.")


def _differs(yours, reference, *args):
    """Whether your function raises on args, or returns another shape or other values than the reference."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = np.asarray(yours(*args), dtype=float)
    except Exception:
        return True
    expected = np.asarray(reference(*args), dtype=float)
    return got.shape != expected.shape or not np.allclose(got, expected, equal_nan=True)


_rerun_answer_with_references(["limit_cold", "limit_hot", "weights_by_temperature"], {"softmax": _softmax_oracle},
                              lambda: _differs(softmax, _softmax_oracle, scores))
### END HIDDEN TESTS
expect_shape(weights_by_temperature, (temperatures.size, scores.size),
             "weights_by_temperature (one row per temperature, one column per score)")
# Hidden tests: the measurement is right.
### BEGIN HIDDEN TESTS
_oracle = np.exp((scores[None, :] - scores.max()) / temperatures[:, None])
_oracle /= _oracle.sum(axis=1, keepdims=True)
_measured = np.asarray(weights_by_temperature, dtype=float)
try:
    with recorded_warnings():
        _yours = np.array([softmax(scores / t) for t in temperatures], dtype=float)
except Exception:
    _yours = None
# Measured right with your own softmax, which is wrong: that mistake costs its points in exercise 1 only.
if (_yours is not None and _yours.shape == _oracle.shape and not np.allclose(_yours, _oracle)
        and _measured.shape == _yours.shape and np.allclose(_measured, _yours, equal_nan=True)):
    print("Your measurement matches your own softmax; the difference from the true weights lies in softmax.")
else:
    expect_close(weights_by_temperature, _oracle,
                 "weights_by_temperature (row t is softmax(scores / temperatures[t]), over the scores)")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_temperature_cold", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Visible and hidden tests: limit_cold, the weights as T -> 0, its shape (visible) and its values (hidden).
### BEGIN HIDDEN TESTS
_rerun_answer_with_references(["limit_cold", "limit_hot", "weights_by_temperature"], {"softmax": _softmax_oracle},
                              lambda: _differs(softmax, _softmax_oracle, scores))
### END HIDDEN TESTS
expect_shape(limit_cold, scores.shape, "limit_cold (one weight per score)")
# Hidden test: the limit T -> 0.
### BEGIN HIDDEN TESTS
_got = np.asarray(limit_cold, dtype=float)
assert np.allclose(_got, [0.0, 0.5, 0.0, 0.5, 0.0], rtol=0.0, atol=1e-6), (
    f"limit_cold is {np.round(_got, 4).tolist()}, not the weights as T -> 0. The largest score takes all the weight "
    "in the limit, but two scores tie for the largest here (3.0, at indices 1 and 3): the ratio of their weights is "
    "exp((3 - 3) / T) = 1 at every temperature, so they share the weight equally.")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_temperature_hot", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Visible and hidden tests: limit_hot, the weights as T -> infinity, its shape (visible) and its values (hidden).
### BEGIN HIDDEN TESTS
_rerun_answer_with_references(["limit_cold", "limit_hot", "weights_by_temperature"], {"softmax": _softmax_oracle},
                              lambda: _differs(softmax, _softmax_oracle, scores))
### END HIDDEN TESTS
expect_shape(limit_hot, scores.shape, "limit_hot (one weight per score)")
# Hidden test: the limit T -> infinity.
### BEGIN HIDDEN TESTS
_got = np.asarray(limit_hot, dtype=float)
assert np.allclose(_got, np.full(5, 0.2), rtol=0.0, atol=1e-6), (
    f"limit_hot is {np.round(_got, 4).tolist()}, not the weights as T -> infinity: every score / T tends to 0, "
    "so every weight tends to the same value, 1 / 5 (weights measured at a finite T are close to it, but not the limit).")
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "bandwidth_md", "locked": true, "schema_version": 3, "solution": false}
# ## 9. Choose a bandwidth, and justify it with a number (2 points)
#
# The cell below makes a noisy data set from $f(x) = 2\sin x + x^{0.8}$ and
# splits it into training and validation points. A small bandwidth follows the
# noise (overfitting); a large one smooths the curve away (underfitting).
#
# For every bandwidth in `candidate_bandwidths`, fit on the training points and
# measure the mean squared error on the validation points:
# $\frac{1}{m} \sum_i (\hat f(x^{\text{val}}_i) - y^{\text{val}}_i)^2$.
# Set `validation_mse` to the array of these errors (one per candidate, in the
# same order) and `chosen_bandwidth` to the candidate you would use. You may
# plot the fits to see why.

# %% nbgrader={"grade": false, "grade_id": "bandwidth_setup", "locked": true, "schema_version": 3, "solution": false}
data_rng = np.random.default_rng(2015)
x_all = data_rng.uniform(0.0, 5.0, size=120)
y_all = 2 * np.sin(x_all) + x_all**0.8 + data_rng.normal(scale=0.5, size=120)
x_fit, y_fit = x_all[:80], y_all[:80]
x_val, y_val = x_all[80:], y_all[80:]
candidate_bandwidths = np.array([0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0, 5.0])

# %% nbgrader={"grade": false, "grade_id": "bandwidth", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
validation_mse = np.array([np.mean((nadaraya_watson(x_val, x_fit, y_fit, sigma) - y_val) ** 2) for sigma in candidate_bandwidths])
chosen_bandwidth = float(candidate_bandwidths[np.argmin(validation_mse)])
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "test_bandwidth", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible and hidden tests: validation_mse has one error per candidate (visible) and the right values (hidden).
### BEGIN HIDDEN TESTS
_bandwidth_references = {"softmax": _softmax_oracle, "weighted_average": _weighted_average_oracle,
                         "gaussian_scores": _gaussian_scores_oracle, "attention_pool": _attention_pool_oracle,
                         "nadaraya_watson": _nadaraya_watson_oracle}
_rerun_answer_with_references(["validation_mse", "chosen_bandwidth"], _bandwidth_references,
                              lambda: _differs(nadaraya_watson, _nadaraya_watson_oracle, x_val, x_fit, y_fit, 0.3))
### END HIDDEN TESTS
expect_shape(validation_mse, candidate_bandwidths.shape, "validation_mse (one error per candidate bandwidth)")
assert chosen_bandwidth in candidate_bandwidths, (
    f"chosen_bandwidth must be one of candidate_bandwidths, not {chosen_bandwidth!r:.80}."
)
# Hidden tests: the errors are measured right.
### BEGIN HIDDEN TESTS
def _validation_errors(regress):
    """The validation MSE of every candidate bandwidth, fitting with `regress` (a nadaraya_watson)."""
    return np.array([np.mean((regress(x_val, x_fit, y_fit, sigma) - y_val) ** 2) for sigma in candidate_bandwidths])


def _measured_with():
    """Which numbers validation_mse matches: "oracle", "yours" (your own nadaraya_watson, where it is wrong) or None."""
    oracle = _validation_errors(_nadaraya_watson_oracle)
    if np.allclose(validation_mse, oracle, rtol=1e-4, atol=1e-10):
        return "oracle", oracle
    try:
        with recorded_warnings():
            yours = _validation_errors(nadaraya_watson)
    except Exception:
        return None, oracle
    # Measuring with your own (wrong) nadaraya_watson is the right measurement: that mistake costs its points once.
    if not np.allclose(yours, oracle, rtol=1e-4) and np.allclose(validation_mse, yours, rtol=1e-4, atol=1e-10):
        return "yours", yours
    return None, oracle


_source, _errors = _measured_with()
if _source is None:
    expect_close(validation_mse, _errors, "validation_mse (mean squared error on (x_val, y_val) after fitting on "
                 "(x_fit, y_fit))", rtol=1e-4)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_bandwidth_choice", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden test: the chosen bandwidth is supported by the validation errors.
### BEGIN HIDDEN TESTS
_rerun_answer_with_references(["validation_mse", "chosen_bandwidth"], _bandwidth_references,
                              lambda: _differs(nadaraya_watson, _nadaraya_watson_oracle, x_val, x_fit, y_fit, 0.3))
_source, _errors = _measured_with()
assert chosen_bandwidth in candidate_bandwidths, f"chosen_bandwidth must be one of candidate_bandwidths, not {chosen_bandwidth!r:.80}."
_chosen_error = _errors[list(candidate_bandwidths).index(chosen_bandwidth)]
assert _chosen_error <= 1.05 * _errors.min(), (
    f"chosen_bandwidth = {chosen_bandwidth} has validation error {_chosen_error:.3f}, but bandwidth "
    f"{candidate_bandwidths[np.argmin(_errors)]} reaches {_errors.min():.3f}: choose the bandwidth the validation "
    "errors support.")
### END HIDDEN TESTS
