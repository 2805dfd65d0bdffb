# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false}
# # Exercise 3: self-attention
#
# In this notebook you build the attention of the transformer (Vaswani et al.,
# 2017): scaled dot-product attention with masks in NumPy, self-attention,
# sinusoidal positional encodings, and multi-head self-attention in PyTorch,
# checked against `torch.nn.MultiheadAttention`. Then you design attention
# weights by hand and write a test that catches buggy attention code.
#
# | # | you build | points |
# |---|---|---|
# | 1 | `scaled_dot_product_attention(Q, K, V, mask=None)` | 4 |
# | 2 | `causal_mask(n)` | 2 |
# | 3 | `self_attention(X, W_q, W_k, W_v, mask=None)` | 2 |
# | 4 | `sinusoidal_positional_encoding(n, d)` | 2 |
# | 5 | `MultiHeadSelfAttention(d_model, num_heads)`, a `torch.nn.Module` | 3 |
# | 6 | design `W_q` and `W_k` so that "sat" attends to "cat" and "mat" | 2 |
# | 7 | find the bug: `check_attention(attn_fn)` | 4 |
# | | **total** | **19** |
#
# **How to work.** Replace every `raise NotImplementedError()` with your code.
# Keep the names and arguments: the grader calls them. Do not edit or delete
# test cells; the grader restores its own copy of each.
#
# **How it is graded.** The visible tests after each exercise check shapes and
# one worked example; run them. Grading adds hidden tests to the cells marked
# *hidden tests*: properties checked on many random inputs (with the
# `hypothesis` library), edge cases (fully masked rows, length 1, batch axes,
# `d_k ≠ d_v`) and agreement with PyTorch's own implementations to `1e-5` in
# float64. A test cell earns its points when it runs without an error.
#
# **Fair grading.** The values decide: a warning your code raises costs no
# points (when a value is wrong, the test names the warning). Answers in
# float32 are compared at float32's precision. Where your answer calls your
# function from an earlier exercise (`self_attention` and `check_attention`
# may call your `scaled_dot_product_attention`) and only that function is
# wrong, the test runs again with a correct version of it, so each mistake
# costs its points once. The `softmax` given below is yours to use or to
# replace: the tests never call it. The names `expect_shape`, `expect_close`,
# `recorded_warnings`, `retry_with_reference` and `gradients_of` belong to the
# tests: do not define your own with these names.
#
# **Conventions.** The last two axes of `Q`, `K`, `V` are (tokens, features);
# leading axes are batch axes and broadcast. A mask is boolean and **`True`
# means "may attend"**, as in `torch.nn.functional.scaled_dot_product_attention`.
# A query whose keys are all masked gets all-zero weights and a zero output.
# The notebook runs in well under 20 seconds on one CPU core with NumPy and
# PyTorch.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import contextlib
import math
import warnings

import numpy as np
import torch
from torch import nn


def softmax(x, axis=-1):
    """Softmax along `axis`; -inf entries get weight 0 and an all -inf slice gives zeros.

    Given to you. It wraps torch.softmax (which is numerically stable, as yours
    from exercise 1) and turns the 0 / 0 of an all -inf slice into zeros.
    """
    weights = torch.softmax(torch.as_tensor(np.asarray(x, dtype=float)), dim=axis)
    return torch.nan_to_num(weights, nan=0.0).numpy()


# The tests' own reference to the softmax above: a softmax of your own under that name changes nothing for them.
_given_softmax = softmax

# What a warning usually means, for the messages of failed tests.
WARNING_CLUES = {
    "overflow encountered in exp": "exp of a large score overflows to inf: subtract the largest score first",
    "invalid value encountered in subtract": "inf - inf is nan: a row whose entries are all -inf minus its maximum (-inf)",
    "invalid value encountered in divide": "0 / 0 is nan. Note that np.where(cond, a / b, 0) computes a / b everywhere; "
                                           "use np.divide(a, b, out=..., where=...) or np.errstate",
    "divide by zero": "a division by zero (a zero sum of weights)",
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


def _as_array(x):
    """A NumPy array of `x` (a tensor is detached first), and whether it holds float32 or coarser floats."""
    if torch.is_tensor(x):
        return x.detach().cpu().double().numpy(), x.is_floating_point() and x.element_size() < 8
    x = np.asarray(x)
    return x.astype(float), x.dtype.kind == "f" and x.dtype.itemsize < 8


def expect_shape(actual, shape, what):
    """Fail with a readable message unless `actual` has shape `shape`."""
    actual = tuple(np.shape(actual))
    assert actual == tuple(shape), f"{what} should have shape {tuple(shape)}, but it has shape {actual}."


def expect_close(actual, expected, what, atol=1e-8, rtol=1e-6, warned=()):
    """Fail with a readable message unless `actual` matches `expected` entry by entry.

    A float32 answer is compared at float32's precision. `warned` holds the
    warnings recorded while `actual` was computed: they cost nothing, but a
    failure message names them.
    """
    actual, low_precision = _as_array(actual)
    expected, _ = _as_array(expected)
    if low_precision:
        atol, rtol = max(atol, 1e-5), max(rtol, 1e-4)
    expect_shape(actual, expected.shape, what)
    nan = np.isnan(actual) & ~np.isnan(expected)
    if nan.any():
        idx = tuple(int(i) for i in np.argwhere(nan)[0])
        raise AssertionError(f"{what} contains NaN, first at index {idx}; expected {expected[idx]:.6g}. "
                             "A fully masked row must give zero weights, not 0 / 0." + _warning_note(warned))
    bad = ~np.isclose(actual, expected, atol=atol, rtol=rtol, equal_nan=True)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        nearly = np.allclose(actual, expected, atol=1e-5, rtol=1e-4, equal_nan=True)
        raise AssertionError(
            f"{what} is wrong at index {idx}: expected {expected[idx]:.6g}, got {actual[idx]:.6g} "
            f"({int(bad.sum())} of {bad.size} entries differ)."
            + (" Your values agree only to about 1e-5, as float32 arithmetic does: compute in float64, "
               "or return float32 (float32 answers are compared at float32's precision)." if nearly else "")
            + _warning_note(warned))


def gradients_of(module, args, wrt=(), pick=0):
    """The gradients of the sum of `module(*args)[pick]` with respect to `args[i]` (for each i in `wrt`) and to
    every parameter of `module`: (the output, [gradient of each of those args], {parameter name: gradient}).

    A gradient that does not reach is None.
    """
    args = list(args)
    for i in wrt:
        args[i] = torch.as_tensor(args[i]).detach().requires_grad_(True)
    out = module(*args)
    first = out if pick is None else out[pick]
    named = list(module.named_parameters())
    found = torch.autograd.grad(first.sum(), [args[i] for i in wrt] + [p for _, p in named], allow_unused=True)
    return out, list(found[:len(wrt)]), {name: g for (name, _), g in zip(named, found[len(wrt):])}


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
    namespace, missing = globals(), object()
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

# %% [markdown] nbgrader={"grade": false, "grade_id": "sdpa_md", "locked": true, "schema_version": 3, "solution": false}
# ## 1. Scaled dot-product attention (4 points)
#
# For queries $Q \in \mathbb{R}^{m \times d_k}$, keys $K \in \mathbb{R}^{n \times d_k}$
# and values $V \in \mathbb{R}^{n \times d_v}$,
#
# $$\operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V,$$
#
# with softmax over the keys (the last axis). A boolean `mask`, broadcastable
# to `(..., m, n)`, says which keys each query may attend to: where it is
# `False`, the score is replaced by $-\infty$ before softmax, so the weight is
# exactly 0.
#
# Write `scaled_dot_product_attention(Q, K, V, mask=None)` for inputs with any
# number of leading batch axes, `(..., m, d_k)`, `(..., n, d_k)`, `(..., n, d_v)`,
# returning `(output (..., m, d_v), weights (..., m, n))`. Use the `softmax`
# given above. Hint: `np.swapaxes(K, -1, -2)` transposes the last two axes
# only; `K.T` would reverse all of them.

# %% nbgrader={"grade": false, "grade_id": "scaled_dot_product_attention", "locked": false, "schema_version": 3, "solution": true}
def scaled_dot_product_attention(Q, K, V, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V: (..., m, d_k), (..., n, d_k), (..., n, d_v) -> ((..., m, d_v), (..., m, n))."""
    ### BEGIN SOLUTION
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_scaled_dot_product_attention", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: shapes and one worked example.
Q = np.array([[1.0, 0.0], [0.0, 0.0]])
K = np.array([[2.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
V = np.array([[1.0], [2.0], [3.0]])
out, w = scaled_dot_product_attention(Q, K, V)
expect_shape(out, (2, 1), "the output for Q (2, 2), K (3, 2), V (3, 1)")
expect_shape(w, (2, 3), "the weights for 2 queries and 3 keys")
# Query 0 scores (2, 0, 0) / sqrt(2); query 1 scores all 0, so uniform weights.
e = np.exp(2 / np.sqrt(2))
expect_close(w[0], [e / (e + 2), 1 / (e + 2), 1 / (e + 2)], "weights of query 0 (scores divided by sqrt(d_k) = sqrt(2))")
expect_close(out[1], [2.0], "output of query 1 (uniform weights: the mean of the values)")
out, w = scaled_dot_product_attention(Q, K, V, mask=np.array([True, False, True]))
expect_close(w[1], [0.5, 0.0, 0.5], "weights of query 1 when key 1 is masked out (mask True = may attend)")

# %% nbgrader={"grade": true, "grade_id": "test_scaled_dot_product_attention_torch", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: agreement with torch.nn.functional.scaled_dot_product_attention (float64, 1e-5), d_k != d_v, batch axes, masks.
### BEGIN HIDDEN TESTS
import torch.nn.functional as F


def _sdpa_oracle(Q, K, V, mask=None):
    """The tests' own attention (torch), for the tests of later exercises whose answers call it."""
    Q, K, V = (torch.as_tensor(np.asarray(a, dtype=float)) for a in (Q, K, V))
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~torch.as_tensor(np.asarray(mask, dtype=bool)), float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return (weights @ V).numpy(), weights.numpy()


rng = np.random.default_rng(0)
for batch, m, n, d_k, d_v in [((), 3, 5, 4, 2), ((2,), 4, 4, 8, 8), ((2, 3), 1, 6, 3, 5), ((), 1, 1, 2, 3)]:
    Q, K, V = rng.normal(size=batch + (m, d_k)), rng.normal(size=batch + (n, d_k)), rng.normal(size=batch + (n, d_v))
    mask = rng.random(batch + (m, n)) < 0.7
    mask[..., 0] = True  # every query may attend to some key: only there does the contract ask to agree with torch
    for name, msk in [("no mask", None), ("a random mask", mask)]:
        with recorded_warnings() as warned:
            out, w = scaled_dot_product_attention(Q, K, V, msk)
        t = [torch.from_numpy(a) for a in (Q, K, V)]
        oracle = F.scaled_dot_product_attention(*t, attn_mask=None if msk is None else torch.from_numpy(msk))
        expect_close(out, oracle.numpy(), f"the output for batch {batch}, m={m}, n={n}, d_k={d_k}, d_v={d_v}, {name}, "
                     "compared with torch's scaled_dot_product_attention", atol=1e-5, rtol=1e-5, warned=warned)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_scaled_dot_product_attention_masks", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: mask polarity, fully masked rows, broadcasting masks.
### BEGIN HIDDEN TESTS
rng = np.random.default_rng(1)
Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
mask = np.array([[True, True, False, False, False], [False, False, False, False, False], [True, True, True, True, True]])
with recorded_warnings() as warned:
    out, w = scaled_dot_product_attention(Q, K, V, mask)
expect_close(w[1], np.zeros(5), "weights of a query whose keys are all masked (must be zeros, not nan)", warned=warned)
expect_close(out[1], np.zeros(2), "output of a query whose keys are all masked (must be a zero vector)", warned=warned)
flipped_w = _given_softmax(np.where(mask, -np.inf, Q @ K.T / 2.0))
assert not np.allclose(w[0], flipped_w[0]), (
    "the weights of query 0 put weight on exactly the keys the mask forbids: "
    "True means 'may attend', so mask out the keys where the mask is False.")
assert np.all(w[0, 2:] == 0), f"query 0 may attend only to keys 0 and 1, but its weights are {np.round(w[0], 3)}"
expect_close(w[0].sum(), 1.0, "the sum of query 0's weights over its allowed keys")
# A key-padding mask of shape (n,) broadcasts over the queries.
out, w = scaled_dot_product_attention(Q, K, V, np.array([True, True, True, False, False]))
assert np.all(w[:, 3:] == 0), "a mask of shape (n,) must hide keys 3 and 4 from every query"
# A (batch, 1, n) mask broadcasts over queries.
Qb, Kb, Vb = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 2))
pad = np.array([[True] * 5, [True, True, False, False, False]])[:, None, :]
out, w = scaled_dot_product_attention(Qb, Kb, Vb, pad)
expect_shape(w, (2, 3, 5), "weights for a batch of 2 with a (2, 1, 5) mask")
assert np.all(w[1, :, 2:] == 0), "the (2, 1, 5) padding mask must hide keys 2 to 4 of batch item 1"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_scaled_dot_product_attention_properties", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests (hypothesis): weights sum to 1 over allowed keys; permuting or adding masked-out keys changes nothing.
# (Keys and values are permuted together.)
### BEGIN HIDDEN TESTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

shapes = st.tuples(st.integers(1, 5), st.integers(1, 6), st.integers(1, 6), st.integers(1, 4), st.integers(0, 10_000))


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(shapes)
def check_properties(args):
    m, n, d_k, d_v, seed = args
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(m, d_k)) * 3, rng.normal(size=(n, d_k)) * 3, rng.normal(size=(n, d_v))
    mask = rng.random((m, n)) < 0.6
    out, w = scaled_dot_product_attention(Q, K, V, mask)
    sums = w.sum(axis=-1)
    allowed = mask.any(axis=-1)
    assert np.allclose(sums[allowed], 1.0) and np.allclose(sums[~allowed], 0.0), (
        f"each row of weights must sum to 1 over its allowed keys (0 if it has none); got row sums {np.round(sums, 4)} "
        f"for m={m}, n={n}, d_k={d_k}")
    assert np.all(w[~mask] == 0), "a masked-out key must get weight exactly 0"
    perm = rng.permutation(n)
    out_p, w_p = scaled_dot_product_attention(Q, K[perm], V[perm], mask[:, perm])
    expect_close(out_p, out, "the output after permuting keys, values and mask columns together (it must not change)")
    extra_K, extra_V = np.vstack([K, rng.normal(size=(2, d_k)) * 100]), np.vstack([V, rng.normal(size=(2, d_v)) * 100])
    out_x, _ = scaled_dot_product_attention(Q, extra_K, extra_V, np.hstack([mask, np.zeros((m, 2), bool)]))
    expect_close(out_x, out, "the output after appending two masked-out keys (masked keys must change nothing)")


with recorded_warnings():
    check_properties()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "causal_md", "locked": true, "schema_version": 3, "solution": false}
# ## 2. The causal mask (2 points)
#
# A model that generates a sequence left to right must not let position $i$
# see positions after it. Write `causal_mask(n)` returning an `(n, n)` boolean
# array that is `True` where the key position is at most the query position
# (row = query, column = key).

# %% nbgrader={"grade": false, "grade_id": "causal_mask", "locked": false, "schema_version": 3, "solution": true}
def causal_mask(n):
    """(n, n) bool, True where key position <= query position."""
    ### BEGIN SOLUTION
    return np.tril(np.ones((n, n), dtype=bool))
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_causal_mask", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: the 3 x 3 mask.
got = causal_mask(3)
expect_shape(got, (3, 3), "causal_mask(3)")
assert np.asarray(got).dtype == bool, f"causal_mask must return booleans, not {np.asarray(got).dtype}"
assert np.array_equal(got, [[True, False, False], [True, True, False], [True, True, True]]), (
    f"causal_mask(3) should let query i see keys 0..i (row i, columns 0..i True), got\n{np.asarray(got)}")

# %% nbgrader={"grade": true, "grade_id": "test_causal_mask_prefix", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: sizes 1 to 9, and with the mask, changing later tokens never changes earlier outputs.
### BEGIN HIDDEN TESTS
for n in range(1, 10):
    got = np.asarray(causal_mask(n))
    assert got.dtype == bool and got.shape == (n, n), f"causal_mask({n}) must be a ({n}, {n}) bool array"
    rows, cols = np.indices((n, n))
    assert np.array_equal(got, cols <= rows), f"causal_mask({n}) must be True exactly where key <= query"
rng = np.random.default_rng(2)
X = rng.normal(size=(6, 4))
out, _ = _sdpa_oracle(X, X, X, np.asarray(causal_mask(6), dtype=bool))
X2 = X.copy()
X2[4:] = rng.normal(size=(2, 4)) * 10
out2, _ = _sdpa_oracle(X2, X2, X2, np.asarray(causal_mask(6), dtype=bool))
expect_close(out2[:4], out[:4], "outputs at positions 0-3 after changing tokens 4 and 5 (a causal model must not see the future)")
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "self_attention_md", "locked": true, "schema_version": 3, "solution": false}
# ## 3. Self-attention (2 points)
#
# In self-attention every token is at once a query, a key and a value. For
# token embeddings $X \in \mathbb{R}^{n \times d_\text{model}}$ and projections
# $W_q, W_k \in \mathbb{R}^{d_\text{model} \times d_k}$,
# $W_v \in \mathbb{R}^{d_\text{model} \times d_v}$:
#
# $$Q = X W_q,\quad K = X W_k,\quad V = X W_v,\qquad \text{output} = \operatorname{Attention}(Q, K, V).$$
#
# Write `self_attention(X, W_q, W_k, W_v, mask=None)` for `X` of shape
# `(..., n, d_model)`, returning `(output (..., n, d_v), weights (..., n, n))`,
# using your `scaled_dot_product_attention`.

# %% nbgrader={"grade": false, "grade_id": "self_attention", "locked": false, "schema_version": 3, "solution": true}
def self_attention(X, W_q, W_k, W_v, mask=None):
    """Self-attention: X (..., n, d_model) -> (output (..., n, d_v), weights (..., n, n))."""
    ### BEGIN SOLUTION
    X = np.asarray(X, dtype=float)
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v, mask)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_self_attention", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: shapes, and identity projections give attention of X with itself.
def check_self_attention():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(4, 3))
    out, w = self_attention(X, np.eye(3), np.eye(3), np.eye(3))
    expect_shape(out, (4, 3), "the output for X (4, 3)")
    expect_shape(w, (4, 4), "the weights for 4 tokens")
    expect_close(w, _given_softmax(X @ X.T / np.sqrt(3)), "the weights with identity projections: softmax(X X^T / sqrt(3))")


references = {}  # the grader puts a correct scaled_dot_product_attention here
### BEGIN HIDDEN TESTS
references = {"scaled_dot_product_attention": _sdpa_oracle}
### END HIDDEN TESTS
retry_with_reference(check_self_attention, references)

# %% nbgrader={"grade": true, "grade_id": "test_self_attention_projections", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: rectangular projections (d_k != d_v != d_model), batch axes, masks, and permutation equivariance.
### BEGIN HIDDEN TESTS
def check_self_attention_projections():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(2, 5, 6))
    W_q, W_k, W_v = rng.normal(size=(6, 3)), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    mask = np.tril(np.ones((5, 5), dtype=bool))
    out, w = self_attention(X, W_q, W_k, W_v, mask)
    expect_shape(out, (2, 5, 2), "the output for X (2, 5, 6), d_k = 3, d_v = 2")
    Q, K, V = (X @ W for W in (W_q, W_k, W_v))
    s = np.where(mask, Q @ np.swapaxes(K, -1, -2) / np.sqrt(3), -np.inf)
    expect_close(w, _given_softmax(s), "the weights (Q = X W_q, K = X W_k, scaled by sqrt(d_k) = sqrt(3), causal mask)")
    expect_close(out, _given_softmax(s) @ V, "the output (weights @ X W_v)")
    perm = rng.permutation(5)
    out_p, _ = self_attention(X[:, perm], W_q, W_k, W_v)
    out_0, _ = self_attention(X, W_q, W_k, W_v)
    expect_close(out_p, out_0[:, perm], "the output for permuted tokens (without positions, self-attention is "
                 "permutation equivariant)")


retry_with_reference(check_self_attention_projections, {"scaled_dot_product_attention": _sdpa_oracle})
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "pe_md", "locked": true, "schema_version": 3, "solution": false}
# ## 4. Sinusoidal positional encoding (2 points)
#
# Self-attention cannot tell word order. The transformer adds to each token
# embedding a vector that depends on its position $p = 0, \dots, n-1$:
#
# $$PE_{p,\,2i} = \sin\!\left(\frac{p}{10000^{2i/d}}\right),\qquad
# PE_{p,\,2i+1} = \cos\!\left(\frac{p}{10000^{2i/d}}\right),$$
#
# for $i = 0, 1, \dots$: even columns hold sines, odd columns cosines, and
# columns $2i$ and $2i+1$ share a frequency. Write
# `sinusoidal_positional_encoding(n, d)` returning the `(n, d)` array; `d` may
# be odd (the last column is then a sine).

# %% nbgrader={"grade": false, "grade_id": "sinusoidal_positional_encoding", "locked": false, "schema_version": 3, "solution": true}
def sinusoidal_positional_encoding(n, d):
    """(n, d) array with PE[p, 2i] = sin(p / 10000^(2i/d)) and PE[p, 2i+1] = cos(p / 10000^(2i/d))."""
    ### BEGIN SOLUTION
    positions = np.arange(n)[:, None]
    even = np.arange(0, d, 2)
    angles = positions / 10000.0 ** (even / d)
    pe = np.zeros((n, d))
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : d // 2])
    return pe
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_sinusoidal_positional_encoding", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: shape and the first rows for d = 4.
pe = sinusoidal_positional_encoding(3, 4)
expect_shape(pe, (3, 4), "sinusoidal_positional_encoding(3, 4)")
expect_close(pe[0], [0.0, 1.0, 0.0, 1.0], "position 0 (sin 0 = 0 in even columns, cos 0 = 1 in odd columns)")
expect_close(pe[1], [np.sin(1.0), np.cos(1.0), np.sin(0.01), np.cos(0.01)],
             "position 1 (columns 2 and 3 use the frequency 1 / 10000^(2/4) = 0.01)")

# %% nbgrader={"grade": true, "grade_id": "test_sinusoidal_positional_encoding_formula", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: the formula entry by entry for several sizes, odd d, and the relative-position property.
### BEGIN HIDDEN TESTS
for n, d in [(1, 2), (7, 6), (50, 16), (5, 7), (4, 1)]:
    pe = sinusoidal_positional_encoding(n, d)
    expect_shape(pe, (n, d), f"sinusoidal_positional_encoding({n}, {d})")
    oracle = np.zeros((n, d))
    for p in range(n):
        for col in range(d):
            i = col // 2
            angle = p / 10000 ** (2 * i / d)
            oracle[p, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    expect_close(pe, oracle, f"sinusoidal_positional_encoding({n}, {d}) (column 2i is sin(p / 10000^(2i/d)), column 2i+1 the cos)")
# PE[p + k] is a fixed rotation of PE[p] in every (sin, cos) pair: dot products depend on the offset only.
pe = sinusoidal_positional_encoding(30, 16)
assert np.allclose(pe[3] @ pe[10], pe[13] @ pe[20]), "PE[p] . PE[p + 7] must be the same for every p"
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "mhsa_md", "locked": true, "schema_version": 3, "solution": false}
# ## 5. Multi-head self-attention in PyTorch (3 points)
#
# Multi-head attention runs $h$ attentions side by side on slices of the
# features. With $d_\text{head} = d_\text{model} / h$:
#
# 1. project $x$ `(B, T, d_model)` once with `self.qkv`, an `nn.Linear(d_model, 3 * d_model)`,
#    and split the result into $Q, K, V$ **in that order** along the last axis
#    (the layout of `nn.MultiheadAttention.in_proj_weight`);
# 2. split each of $Q, K, V$ into `num_heads` heads of `d_head` consecutive
#    features: shape `(B, num_heads, T, d_head)`;
# 3. run scaled dot-product attention in every head (scale $1/\sqrt{d_\text{head}}$);
#    a mask of shape `(T, T)` or `(B, T, T)`, **True = may attend**, applies to
#    every head; a fully masked query gets zero weights, and the gradients
#    stay finite. Finite gradients are required (and graded in a cell of their
#    own) because batches often hold a padded position that may attend to
#    nothing, and one `nan` gradient turns every parameter into `nan` at the
#    next optimizer step. Softmax of a row of only $-\infty$ is `nan`, and its
#    gradient flows back through anything *added* to the scores: give such
#    rows finite scores (`masked_fill`, `torch.where`) and zero their weights;
# 4. merge the heads back to `(B, T, d_model)` and apply `self.out`, an
#    `nn.Linear(d_model, d_model)`.
#
# `forward(x, mask=None)` returns `(output (B, T, d_model), weights (B, num_heads, T, T))`.
# Use only PyTorch tensor operations (no NumPy) so that gradients flow. With
# the same parameters, your module must equal
# `nn.MultiheadAttention(d_model, num_heads, batch_first=True)`, whose
# `attn_mask` uses the **opposite** polarity (True = may *not* attend).

# %% nbgrader={"grade": false, "grade_id": "MultiHeadSelfAttention", "locked": false, "schema_version": 3, "solution": true}
class MultiHeadSelfAttention(nn.Module):
    """Multi-head self-attention: x (B, T, d_model) -> (output (B, T, d_model), weights (B, h, T, T))."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        ### BEGIN SOLUTION
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.num_heads, self.d_head = num_heads, d_model // num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        ### END SOLUTION

    def forward(self, x, mask=None):
        ### BEGIN SOLUTION
        B, T, d_model = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.reshape(B, T, self.num_heads, self.d_head).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            mask = torch.as_tensor(mask, dtype=torch.bool, device=x.device)
            mask = mask[:, None] if mask.dim() == 3 else mask  # (B, 1, T, T): the same for every head
            # A fully masked row would be softmax of all -inf (nan); give it finite scores, then zero it.
            has_key = mask.any(dim=-1, keepdim=True)
            scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
            weights = scores.softmax(dim=-1) * has_key
        else:
            weights = scores.softmax(dim=-1)
        merged = (weights @ v).transpose(1, 2).reshape(B, T, d_model)
        return self.out(merged), weights
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_MultiHeadSelfAttention", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: parameter names and shapes, output shapes.
torch.manual_seed(0)
mhsa = MultiHeadSelfAttention(8, 2)
assert isinstance(getattr(mhsa, "qkv", None), nn.Linear) and isinstance(getattr(mhsa, "out", None), nn.Linear), (
    "MultiHeadSelfAttention needs attributes qkv = nn.Linear(d_model, 3 * d_model) and out = nn.Linear(d_model, d_model)")
expect_shape(mhsa.qkv.weight, (24, 8), "qkv.weight")
expect_shape(mhsa.out.weight, (8, 8), "out.weight")
out, w = mhsa(torch.randn(3, 5, 8))
expect_shape(out, (3, 5, 8), "the output for x (3, 5, 8)")
expect_shape(w, (3, 2, 5, 5), "the weights (batch, heads, queries, keys)")
expect_close(w.sum(-1), torch.ones(3, 2, 5), "the sum of each head's weights over the keys")

# %% nbgrader={"grade": true, "grade_id": "test_MultiHeadSelfAttention_torch", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: equality with nn.MultiheadAttention (float64, 1e-5), without and with masks, and for length 1.
# The masks have shapes (T, T) and (B, T, T).
### BEGIN HIDDEN TESTS
torch.manual_seed(1)
for d_model, heads, B, T in [(8, 2, 2, 5), (12, 3, 1, 4), (6, 1, 3, 1), (16, 4, 2, 7)]:
    mine = MultiHeadSelfAttention(d_model, heads).double()
    ref = nn.MultiheadAttention(d_model, heads, batch_first=True).double()
    with torch.no_grad():
        ref.in_proj_weight.copy_(mine.qkv.weight)
        ref.in_proj_bias.copy_(mine.qkv.bias)
        ref.out_proj.weight.copy_(mine.out.weight)
        ref.out_proj.bias.copy_(mine.out.bias)
    x = torch.randn(B, T, d_model, dtype=torch.float64)
    causal = torch.tril(torch.ones(T, T)).bool()
    per_item = torch.rand(B, T, T) < 0.6
    per_item[..., 0] = True  # every query may attend to some key: nn.MultiheadAttention gives nan otherwise
    for name, mask in [("no mask", None), ("a causal (T, T) mask", causal), ("a (B, T, T) mask", per_item)]:
        with torch.no_grad():
            out, w = mine(x, mask)
        if mask is causal and T > 1 and float(w.detach()[..., 0, 1:].sum()) > 0:
            raise AssertionError(
                "under the causal mask, query 0 attends to later keys: the mask is flipped. In this course mask True "
                "means 'may attend'; nn.MultiheadAttention's attn_mask uses the opposite polarity.")
        if mask is None:
            ref_mask = None
        else:
            ref_mask = ~(mask if mask.dim() == 2 else mask.repeat_interleave(heads, dim=0))
        with torch.no_grad():
            ref_out, ref_w = ref(x, x, x, attn_mask=ref_mask, need_weights=True, average_attn_weights=False)
        expect_close(w, ref_w, f"the weights for d_model={d_model}, {heads} heads, T={T}, {name}, "
                     "compared with nn.MultiheadAttention (check the head split and the 1/sqrt(d_head) scale)", atol=1e-5, rtol=1e-5)
        expect_close(out, ref_out, f"the output for d_model={d_model}, {heads} heads, T={T}, {name}, "
                     "compared with nn.MultiheadAttention given the same parameters", atol=1e-5, rtol=1e-5)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_MultiHeadSelfAttention_fully_masked", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden test: a query that may attend to nothing gets zero weights in every head (not nan, not uniform).
### BEGIN HIDDEN TESTS
torch.manual_seed(2)
mine = MultiHeadSelfAttention(8, 2).double()
mask = torch.ones(2, 4, 4, dtype=torch.bool)
mask[0, 1] = False  # query 1 of batch item 0 may attend to nothing
with torch.no_grad():
    out, w = mine(torch.randn(2, 4, 8, dtype=torch.float64), mask)
expect_close(w[0, :, 1], torch.zeros(2, 4), "the weights of a fully masked query (must be zeros in every head, not nan)")
expect_close(w[1].sum(-1), torch.ones(2, 4), "the weight sums of batch item 1, whose queries may all attend")
assert torch.isfinite(out).all(), "the output contains nan or inf when a query is fully masked"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_MultiHeadSelfAttention_gradients", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden test: gradients stay finite when a query is fully masked (so such a batch can still be trained on).
### BEGIN HIDDEN TESTS
torch.manual_seed(3)
mine = MultiHeadSelfAttention(8, 2).double()
x = torch.randn(2, 4, 8, dtype=torch.float64)
mask = torch.ones(4, 4, dtype=torch.bool)
mask[1] = False  # query 1 may attend to nothing
_, (x_grad,), parameter_grads = gradients_of(mine, (x, mask), wrt=(0,))
bad = [name for name, g in [("x", x_grad)] + list(parameter_grads.items()) if g is None or not torch.isfinite(g).all()]
assert not bad, (
    f"the gradients with respect to {', '.join(bad)} are not finite when a query is fully masked: nan came back through "
    "softmax. Give a fully masked row finite scores (masked_fill or torch.where, not an added -inf), then zero its weights.")
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "design_md", "locked": true, "schema_version": 3, "solution": false}
# ## 6. Design the weights (2 points)
#
# Below are fixed 8-dimensional embeddings `E` of the seven tokens of *"The
# gray cat sat on the mat"*, one row per token (the two "the"s share an
# embedding). Choose `W_q_design` and `W_k_design`, both of shape `(8, 8)`, so
# that in `self_attention(E, W_q_design, W_k_design, np.eye(8))` the query of
# **"sat"** (row `SAT` = 3) puts its two largest weights on **"cat"** (column
# `CAT` = 2) and **"mat"** (column `MAT` = 6), together at least 0.8 of its
# weight. Any design that does this earns the points.
#
# Hint: the score of query $i$ and key $j$ is
# $\mathbf{e}_i W_q W_k^\top \mathbf{e}_j^\top / \sqrt{8}$. With
# $W_k = I$, the scores of "sat" are $E\,\mathbf{u} / \sqrt{8}$, where
# $\mathbf{u} = \mathbf{e}_\text{sat} W_q$ is the query vector of "sat". The
# embeddings are random, so they are *not* orthogonal: the tempting
# $\mathbf{u} \propto \mathbf{e}_\text{cat} + \mathbf{e}_\text{mat}$ also scores
# high against words whose embeddings resemble those (try it). Instead, decide
# the score you want against each of the six distinct words (high for "cat"
# and "mat", 0 for the others) and find a $\mathbf{u}$ that gives exactly these
# scores: that is a linear system with 6 equations and 8 unknowns
# (`np.linalg.lstsq` solves it). Then choose a $W_q$ that maps
# $\mathbf{e}_\text{sat}$ to $\mathbf{u}$.

# %% nbgrader={"grade": false, "grade_id": "design_setup", "locked": true, "schema_version": 3, "solution": false}
tokens = ["The", "gray", "cat", "sat", "on", "the", "mat"]
_vocab_rng = np.random.default_rng(1706)
_vocab = {w: _vocab_rng.normal(size=8) for w in ["the", "gray", "cat", "sat", "on", "mat"]}
E = np.stack([_vocab[t.lower()] for t in tokens])  # (7, 8): one row per token
SAT, CAT, MAT = 3, 2, 6

# %% nbgrader={"grade": false, "grade_id": "design", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
# The scores we want from "sat": high for "cat" and "mat", 0 for the rest. Six distinct embeddings in 8
# dimensions are linearly independent, so some query vector q_sat gives exactly these scores.
wanted = np.zeros(len(tokens))
wanted[[CAT, MAT]] = 5.0 * np.sqrt(8)
q_sat = np.linalg.lstsq(E, wanted, rcond=None)[0]
W_q_design = np.outer(E[SAT], q_sat) / (E[SAT] @ E[SAT])  # maps e_sat to q_sat
W_k_design = np.eye(8)
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "test_design", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Visible test: the two largest weights of "sat" are on "cat" and "mat", and together at least 0.8.
# (The weights are computed here, independently of your functions.)
W_q_design, W_k_design = np.asarray(W_q_design, dtype=float), np.asarray(W_k_design, dtype=float)
expect_shape(W_q_design, (8, 8), "W_q_design")
expect_shape(W_k_design, (8, 8), "W_k_design")
scores_sat = (E[SAT] @ W_q_design) @ (E @ W_k_design).T / np.sqrt(8)
weights_sat = np.exp(scores_sat - scores_sat.max())
weights_sat /= weights_sat.sum()
print("weights of 'sat':", {t: round(float(x), 3) for t, x in zip(tokens, weights_sat)})
top_two = set(np.argsort(weights_sat)[-2:])
assert top_two == {CAT, MAT}, (
    f"the two largest weights of 'sat' are on {[tokens[j] for j in sorted(top_two)]}, not 'cat' and 'mat'")
assert weights_sat[CAT] + weights_sat[MAT] >= 0.8, (
    f"'cat' and 'mat' get {weights_sat[CAT] + weights_sat[MAT]:.2f} of the weight of 'sat'; make it at least 0.8 "
    "(a larger scale of W_q sharpens the softmax)")

# %% [markdown] nbgrader={"grade": false, "grade_id": "check_md", "locked": true, "schema_version": 3, "solution": false}
# ## 7. Find the bug (4 points)
#
# Write `check_attention(attn_fn)` that returns `True` if `attn_fn` is a correct
# scaled dot-product attention and `False` if it has a bug. `attn_fn` has the
# signature of your `scaled_dot_product_attention`: `attn_fn(Q, K, V, mask=None)`
# returns `(output, weights)`, for NumPy arrays with optional batch axes.
#
# The grader runs your checker on a correct implementation and on several
# hidden buggy ones, the kinds of mistakes people make when they write
# attention. You earn 0.5 points for every bug you catch, but only if your
# checker accepts the correct implementation: a checker that rejects everything
# catches nothing. Think of what could go wrong (the scale, the softmax axis,
# the mask, batch axes, `d_k ≠ d_v`, ...) and compare `attn_fn` with your own
# implementation on inputs that expose each mistake. `check_attention` must
# not raise: if `attn_fn` raises, that is a bug, so return `False`.

# %% nbgrader={"grade": false, "grade_id": "check_attention", "locked": false, "schema_version": 3, "solution": true}
def check_attention(attn_fn):
    """True if attn_fn(Q, K, V, mask=None) -> (output, weights) is a correct scaled dot-product attention."""
    ### BEGIN SOLUTION
    rng = np.random.default_rng(0)
    cases = []
    for batch, m, n, d_k, d_v in [((), 3, 5, 4, 2), ((2,), 4, 4, 3, 3), ((2, 2), 2, 6, 5, 1)]:
        Q, K, V = rng.normal(size=batch + (m, d_k)), rng.normal(size=batch + (n, d_k)), rng.normal(size=batch + (n, d_v))
        mask = rng.random(batch + (m, n)) < 0.5
        mask[..., 0] = True
        cases += [(Q, K, V, None), (Q, K, V, mask)]
    for Q, K, V, mask in cases:
        expected_out, expected_w = scaled_dot_product_attention(Q, K, V, mask)
        try:
            out, w = attn_fn(Q, K, V, mask)
        except Exception:
            return False
        if np.shape(out) != expected_out.shape or np.shape(w) != expected_w.shape:
            return False
        if not (np.allclose(out, expected_out) and np.allclose(w, expected_w)):
            return False
    return True
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_check_attention", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: accepts a correct implementation (torch's), rejects one that returns zeros.
def torch_attention(Q, K, V, mask=None):
    Q, K, V = (torch.as_tensor(np.asarray(a, dtype=float)) for a in (Q, K, V))
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~torch.as_tensor(np.asarray(mask, dtype=bool)), float("-inf"))
    w = torch.nan_to_num(torch.softmax(scores, dim=-1))
    return (w @ V).numpy(), w.numpy()


def zeros_attention(Q, K, V, mask=None):
    return np.zeros(np.shape(Q)[:-1] + np.shape(V)[-1:]), np.zeros(np.shape(Q)[:-1] + np.shape(K)[-2:-1])


def check_check_attention():
    with recorded_warnings():
        verdicts = check_attention(torch_attention), check_attention(zeros_attention)
    assert bool(verdicts[0]), "check_attention rejects a correct implementation"
    assert not bool(verdicts[1]), "check_attention accepts an implementation that returns zeros"


references = {}  # the grader puts a correct scaled_dot_product_attention here
### BEGIN HIDDEN TESTS
references = {"scaled_dot_product_attention": _sdpa_oracle}
### END HIDDEN TESTS
retry_with_reference(check_check_attention, references)

# %% nbgrader={"grade": true, "grade_id": "test_check_attention_bug_no_scale", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden test: check_attention rejects a hidden buggy attention (bug 1 of 6) and accepts a correct one.
# Each of the six bug cells is one buggy implementation (0.5 points each), scored only if
# check_attention also accepts the correct implementation.
### BEGIN HIDDEN TESTS
def _buggy(scale=lambda d: 1 / math.sqrt(d), axis=-1, flip=False, mask_after=False, full_transpose=False):
    """An attention with one of several classic bugs switched on (all off: correct)."""
    def attn(Q, K, V, mask=None):
        Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
        Kt = K.T if full_transpose else np.swapaxes(K, -1, -2)
        s = Q @ Kt * scale(Q.shape[-1])
        if mask is not None and not mask_after:
            m = np.asarray(mask, dtype=bool)
            s = np.where(~m if flip else m, s, -np.inf)
        w = _given_softmax(s, axis=axis)
        if mask is not None and mask_after:
            w = w * np.asarray(mask, dtype=bool)
        return w @ V, w
    return attn


def _expect_caught(bug, fn):
    """check_attention accepts the correct implementation and rejects `fn` (truth by value: np.bool_ is fine)."""
    def check():
        with recorded_warnings():  # buggy code may warn; that is not the student's fault
            accepts_correct = check_attention(_buggy())
            verdict = check_attention(fn)
        assert bool(accepts_correct), "check_attention rejects a correct implementation, so it earns nothing for bugs"
        assert not bool(verdict), f"check_attention accepts an implementation with a bug: {bug}"

    retry_with_reference(check, {"scaled_dot_product_attention": _sdpa_oracle})


_expect_caught("no scaling by 1 / sqrt(d_k)", _buggy(scale=lambda d: 1.0))
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_check_attention_bug_scale_dk", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden test: check_attention rejects a hidden buggy attention (bug 2 of 6) and accepts a correct one.
### BEGIN HIDDEN TESTS
_expect_caught("scores divided by d_k instead of sqrt(d_k)", _buggy(scale=lambda d: 1.0 / d))
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_check_attention_bug_flipped_mask", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden test: check_attention rejects a hidden buggy attention (bug 3 of 6) and accepts a correct one.
### BEGIN HIDDEN TESTS
_expect_caught("mask polarity flipped (True treated as 'may not attend')", _buggy(flip=True))
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_check_attention_bug_mask_after_softmax", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden test: check_attention rejects a hidden buggy attention (bug 4 of 6) and accepts a correct one.
### BEGIN HIDDEN TESTS
_expect_caught("mask applied to the weights after softmax (rows no longer sum to 1)", _buggy(mask_after=True))
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_check_attention_bug_query_axis", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden test: check_attention rejects a hidden buggy attention (bug 5 of 6) and accepts a correct one.
### BEGIN HIDDEN TESTS
_expect_caught("softmax over the queries instead of the keys", _buggy(axis=-2))
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_check_attention_bug_batch_transpose", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden test: check_attention rejects a hidden buggy attention (bug 6 of 6) and accepts a correct one.
### BEGIN HIDDEN TESTS
_expect_caught("K.T, which reverses every axis, instead of swapping the last two (wrong with batch axes)", _buggy(full_transpose=True))
### END HIDDEN TESTS
