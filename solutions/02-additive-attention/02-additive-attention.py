# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false}
# # Exercise 2: additive attention
#
# In this notebook you build the additive attention of Bahdanau, Cho and
# Bengio (2015), first in NumPy, then as a PyTorch module, and wire it into an
# encoder–decoder that learns to reverse sequences of digits. If your
# attention is right, the decoder learns where to look: output position $t$
# of a sequence of length $n$ attends to source position $n - 1 - t$.
#
# | # | you build | points |
# |---|---|---|
# | 1 | `additive_scores(queries, keys, W_q, W_k, w_v)` | 3 |
# | 2 | `masked_softmax(scores, mask)` | 3 |
# | 3 | `AdditiveAttention(query_dim, key_dim, hidden_dim)`, a `torch.nn.Module` | 4 |
# | 4 | `decoder_attention` and `build_model`: wire attention into a decoder and train it | 4 |
# | | **total** | **14** |
#
# **How to work.** Replace every `raise NotImplementedError()` with your code.
# Keep the names and arguments: the grader calls them. Do not edit or delete
# test cells; the grader restores its own copy of each.
#
# **How it is graded.** The visible tests after each exercise check shapes and
# one worked example; run them. Grading adds hidden tests to the cells marked
# *hidden tests*: agreement of your module with an independent computation,
# masks of several shapes, fully masked rows, gradients, float32 and float64,
# batch and length 1. Exercise 4 is graded on the accuracy of the trained model
# and on whether its attention finds the true source positions. A test cell
# earns its points when it runs without an error.
#
# **Fair grading.** The values decide: a warning your code raises costs no
# points (when a value is wrong, the test names the warning). Answers in
# float32 are compared at float32's precision. Where your answer uses your
# work from an earlier exercise (exercise 4 uses your `AdditiveAttention`) and
# only that is wrong, the test runs again with a correct version of it, so
# each mistake costs its points once. The trained model's thresholds hold, with
# a wide margin, for every random seed and every order of creating the modules
# that we tried. The names `expect_shape`, `expect_close`,
# `recorded_warnings`, `retry_with_reference` and `gradients_of` belong to the
# tests: do not define your own with these names.
#
# **Conventions.** Masks are boolean and **`True` means "may attend"**. A
# query whose keys are all masked gets all-zero weights and a zero output
# (never `nan`). Weight matrices multiply on the right in NumPy (`x @ W`). The
# whole notebook, training included, runs in about 10 seconds on one CPU core.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import contextlib
import math
import warnings

import numpy as np
import torch
from torch import nn

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
    """The gradients of the sum of `module(*args)[pick]` (of all its outputs if `pick` is None) with respect to
    `args[i]` (for each i in `wrt`) and to every parameter of `module`: (the output, [gradient of each of those
    args], {parameter name: gradient}). A gradient that does not reach is None.
    """
    args = list(args)
    for i in wrt:
        args[i] = torch.as_tensor(args[i]).detach().requires_grad_(True)
    out = module(*args)
    first = out if pick is None else out[pick]
    if isinstance(first, (tuple, list)):
        first = sum(t.sum() for t in first)
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

# %% [markdown] nbgrader={"grade": false, "grade_id": "additive_md", "locked": true, "schema_version": 3, "solution": false}
# ## 1. The additive score (3 points)
#
# Bahdanau et al. score a query $\mathbf{q}_i \in \mathbb{R}^{1 \times d_q}$ against a
# key $\mathbf{k}_j \in \mathbb{R}^{1 \times d_k}$ (vectors are rows) with a
# network with one hidden layer of width $d_a$:
#
# $$s_{ij} = \tanh\!\left(\mathbf{q}_i W_q + \mathbf{k}_j W_k\right) \cdot \mathbf{w}_v ,$$
#
# with $W_q \in \mathbb{R}^{d_q \times d_a}$, $W_k \in \mathbb{R}^{d_k \times d_a}$
# and $\mathbf{w}_v \in \mathbb{R}^{d_a}$. Queries and keys may have different
# sizes. Write `additive_scores(queries, keys, W_q, W_k, w_v)` for queries
# `(m, d_q)` and keys `(n, d_k)`, returning the `(m, n)` score matrix without
# Python loops. Hint: `(queries @ W_q)[:, None, :] + (keys @ W_k)[None, :, :]`
# has shape `(m, n, d_a)`.

# %% nbgrader={"grade": false, "grade_id": "additive_scores", "locked": false, "schema_version": 3, "solution": true}
def additive_scores(queries, keys, W_q, W_k, w_v):
    """tanh(q_i W_q + k_j W_k) . w_v: (m, d_q), (n, d_k), (d_q, d_a), (d_k, d_a), (d_a,) -> (m, n)."""
    ### BEGIN SOLUTION
    hidden = (np.asarray(queries, dtype=float) @ W_q)[:, None, :] + (np.asarray(keys, dtype=float) @ W_k)[None, :, :]
    return np.tanh(hidden) @ np.asarray(w_v, dtype=float)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_additive_scores", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: shape and one worked example with d_a = 1.
queries = np.array([[1.0], [0.0]])           # (m, d_q) = (2, 1)
keys = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]])  # (n, d_k) = (3, 2)
got = additive_scores(queries, keys, W_q=np.array([[1.0]]), W_k=np.array([[0.5], [-1.0]]), w_v=np.array([2.0]))
expect_shape(got, (2, 3), "additive_scores for 2 queries and 3 keys")
expect_close(got, [[0.0, 2 * np.tanh(1.5), 2 * np.tanh(1.0)], [2 * np.tanh(-1.0), 2 * np.tanh(0.5), 0.0]],
             "additive_scores (row i: query i; column j: key j; s_ij = tanh(q_i W_q + k_j W_k) . w_v)")

# %% nbgrader={"grade": true, "grade_id": "test_additive_scores_oracle", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden tests: random sizes (d_q != d_k, d_a from 1 to 6) against a loop over every pair.
### BEGIN HIDDEN TESTS
rng = np.random.default_rng(0)
for m, n, d_q, d_k, d_a in [(3, 4, 2, 5, 6), (1, 1, 1, 1, 1), (5, 2, 4, 4, 3)]:
    q, k = rng.normal(size=(m, d_q)), rng.normal(size=(n, d_k))
    W_q, W_k, w_v = rng.normal(size=(d_q, d_a)), rng.normal(size=(d_k, d_a)), rng.normal(size=d_a)
    oracle = np.array([[sum(math.tanh(sum(q[i, a] * W_q[a, t] for a in range(d_q)) + sum(k[j, b] * W_k[b, t] for b in range(d_k)))
                            * w_v[t] for t in range(d_a)) for j in range(n)] for i in range(m)])
    expect_close(additive_scores(q, k, W_q, W_k, w_v), oracle,
                 f"additive_scores for m={m}, n={n}, d_q={d_q}, d_k={d_k}, d_a={d_a} (tanh of the sum, then the dot product with w_v)")
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "masked_softmax_md", "locked": true, "schema_version": 3, "solution": false}
# ## 2. Masked softmax (3 points)
#
# Sequences in a batch have different lengths, so the shorter ones are padded,
# and a query must not attend to padding. Write `masked_softmax(scores, mask)`:
# softmax over the last axis of `scores` in which every entry where `mask` is
# `False` gets weight exactly 0. `mask` is boolean and broadcastable to
# `scores` (e.g. `(n,)`, `(m, n)`, `(batch, 1, n)`). It must be numerically
# stable (scores like 1e4), raise no warnings, and give all-zero weights to a
# row whose entries are all masked. Hint: replace masked scores by `-np.inf`,
# not by a large negative number: why?

# %% nbgrader={"grade": false, "grade_id": "masked_softmax", "locked": false, "schema_version": 3, "solution": true}
def masked_softmax(scores, mask):
    """Softmax over the last axis, with weight 0 where mask is False and all-zero rows where all is masked."""
    ### BEGIN SOLUTION
    scores = np.where(np.asarray(mask, dtype=bool), np.asarray(scores, dtype=float), -np.inf)
    shift = np.max(scores, axis=-1, keepdims=True)
    shift = np.where(np.isfinite(shift), shift, 0.0)
    e = np.exp(scores - shift)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_masked_softmax", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: shape and one worked example.
scores = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
got = masked_softmax(scores, np.array([[True, True, False], [True, True, True]]))
expect_shape(got, (2, 3), "masked_softmax of a (2, 3) array")
expect_close(got, [[0.26894142, 0.73105858, 0.0], [1 / 3, 1 / 3, 1 / 3]],
             "masked_softmax (row 0 may attend to keys 0 and 1 only; row 1 to all three)")

# %% nbgrader={"grade": true, "grade_id": "test_masked_softmax_edges", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden tests: mask polarity, broadcasting masks, fully masked rows, large scores.
### BEGIN HIDDEN TESTS
rng = np.random.default_rng(1)
with recorded_warnings() as warned:
    got = masked_softmax(np.array([[5.0, 1.0, 2.0]]), np.array([[False, True, True]]))
assert got[0, 0] == 0, (
    f"key 0 is masked (mask False) but gets weight {got[0, 0]:.3f}: mask True means 'may attend', "
    "so the keys to hide are where the mask is False." + _warning_note(warned))
with recorded_warnings() as warned:
    got = masked_softmax(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[False, False], [True, False]]))
expect_close(got, [[0.0, 0.0], [1.0, 0.0]],
             "masked_softmax with a fully masked row 0 (all-zero weights, not nan and not uniform)", warned=warned)
with recorded_warnings() as warned:
    got = masked_softmax(np.array([1e4, 0.0, -1e4]), np.array([True, True, True]))
expect_close(got, [1.0, 0.0, 0.0], "masked_softmax([1e4, 0, -1e4]) (subtract the largest allowed score)", warned=warned)
scores = rng.normal(size=(2, 3, 4))
pad = np.array([[True, True, True, False], [True, False, False, False]])[:, None, :]  # (2, 1, 4)
with recorded_warnings() as warned:
    got = masked_softmax(scores, pad)
expect_shape(got, (2, 3, 4), "masked_softmax with a (2, 1, 4) padding mask")
for b in range(2):
    for i in range(3):
        allowed = pad[b, 0]
        e = np.exp(scores[b, i, allowed] - scores[b, i, allowed].max())
        expect_close(got[b, i, allowed], e / e.sum(), f"batch {b}, query {i}: softmax over its allowed keys", warned=warned)
        assert np.all(got[b, i, ~allowed] == 0), f"batch {b}, query {i} gives weight to padding"
with recorded_warnings() as warned:
    got = masked_softmax(np.array([[2.0, 1.0], [0.5, 0.5]]), np.array([True, False]))
expect_close(got, [[1.0, 0.0], [1.0, 0.0]], "masked_softmax with a mask of shape (n,) shared by all rows", warned=warned)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "module_md", "locked": true, "schema_version": 3, "solution": false}
# ## 3. Additive attention as a PyTorch module (4 points)
#
# Complete `AdditiveAttention(query_dim, key_dim, hidden_dim)`, where
# `hidden_dim` is the hidden width $d_a$ of exercise 1. Its constructor
# is given and creates exactly these parameters (the names matter: the grader
# loads weights into them):
#
# - `self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)`
# - `self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)`
# - `self.w_v = nn.Linear(hidden_dim, 1, bias=False)`
#
# `forward(queries, keys, values, mask=None)` takes queries `(B, m, d_q)`,
# keys `(B, n, d_k)`, values `(B, n, d_v)` and an optional boolean mask of
# shape `(B, m, n)` or `(B, 1, n)`, and returns `(output (B, m, d_v), weights (B, m, n))`.
# Use only PyTorch operations so gradients flow, and make sure a fully masked
# query gives zero weights **and finite gradients**. Softmax of a row of only
# `-inf` is `nan`, and `nan * 0` is still `nan`: replace such weights (e.g.
# with `torch.where`), do not multiply them by 0. The gradient at such a row is
# `nan` too: `masked_fill` and `torch.where` pass no gradient to the entries
# they replace, so it stops there, but an added bias of `-inf` (`scores + bias`)
# passes it on to the parameters. Simplest: give fully masked rows finite
# scores before softmax, then set their weights to 0. Note that
# `nn.Linear(a, b)` stores a weight of shape `(b, a)` and computes
# `x @ weight.T`.

# %% nbgrader={"grade": false, "grade_id": "AdditiveAttention", "locked": false, "schema_version": 3, "solution": true}
class AdditiveAttention(nn.Module):
    """Additive attention: (B, m, d_q), (B, n, d_k), (B, n, d_v) -> ((B, m, d_v), (B, m, n))."""

    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        # Given: the parameters of the contract.
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        ### BEGIN SOLUTION
        hidden = torch.tanh(self.W_q(queries)[:, :, None, :] + self.W_k(keys)[:, None, :, :])  # (B, m, n, d_a)
        scores = self.w_v(hidden).squeeze(-1)  # (B, m, n)
        if mask is None:
            weights = scores.softmax(dim=-1)
        else:
            mask = torch.as_tensor(mask, dtype=torch.bool, device=scores.device)
            has_key = mask.any(dim=-1, keepdim=True)
            scores = scores.masked_fill(~mask, float("-inf")).masked_fill(~has_key, 0.0)
            weights = scores.softmax(dim=-1) * has_key
        return weights @ values, weights
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_AdditiveAttention", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: parameter shapes and output shapes.
torch.manual_seed(0)
attention = AdditiveAttention(query_dim=3, key_dim=5, hidden_dim=4)
for name, shape in [("W_q", (4, 3)), ("W_k", (4, 5)), ("w_v", (1, 4))]:
    layer = getattr(attention, name, None)
    assert isinstance(layer, nn.Linear) and layer.bias is None, f"{name} must be an nn.Linear without bias"
    expect_shape(layer.weight, shape, f"{name}.weight")
out, w = attention(torch.randn(2, 6, 3), torch.randn(2, 7, 5), torch.randn(2, 7, 8))
expect_shape(out, (2, 6, 8), "the output for B=2, m=6, d_v=8")
expect_shape(w, (2, 6, 7), "the weights for B=2, m=6, n=7")
expect_close(w.sum(-1), torch.ones(2, 6), "the sum of each query's weights over the keys")

# %% nbgrader={"grade": true, "grade_id": "test_AdditiveAttention_oracle", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: the module equals an independent loop over every query and key, given the same weights.
### BEGIN HIDDEN TESTS
class _AdditiveAttentionOracle(nn.Module):
    """The tests' own additive attention, for the tests of exercise 4 (which uses AdditiveAttention)."""

    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.w_v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, queries, keys, values, mask=None):
        scores = self.w_v(torch.tanh(self.W_q(queries).unsqueeze(2) + self.W_k(keys).unsqueeze(1))).squeeze(-1)
        if mask is None:
            return torch.softmax(scores, -1) @ values, torch.softmax(scores, -1)
        mask = torch.as_tensor(mask, dtype=torch.bool).expand_as(scores)
        weights = torch.softmax(scores.masked_fill(~mask, -1e30), -1) * mask.any(-1, keepdim=True)
        return weights @ values, weights


torch.manual_seed(1)
attention = AdditiveAttention(3, 5, 4).double()
q, k, v = torch.randn(2, 4, 3, dtype=torch.float64), torch.randn(2, 6, 5, dtype=torch.float64), torch.randn(2, 6, 2, dtype=torch.float64)
mask = torch.rand(2, 4, 6) < 0.7
mask[..., 0] = True
W_q, W_k, w_v = (layer.weight.detach().numpy() for layer in (attention.W_q, attention.W_k, attention.w_v))
for name, msk in [("no mask", None), ("a (B, m, n) mask", mask)]:
    with torch.no_grad():
        out, w = attention(q, k, v, msk)
    for b in range(2):
        ref_w = np.zeros((4, 6))
        for i in range(4):
            scores = np.array([sum(w_v[0, t] * math.tanh(float(q[b, i].numpy() @ W_q[t] + k[b, j].numpy() @ W_k[t]))
                                   for t in range(4)) for j in range(6)])
            allowed = np.ones(6, bool) if msk is None else msk[b, i].numpy()
            e = np.where(allowed, np.exp(scores - scores[allowed].max()), 0.0)
            ref_w[i] = e / e.sum()
        expect_close(w[b], ref_w, f"the weights of batch item {b} with {name}, compared with a loop over every query and "
                     "key (softmax over the allowed keys of tanh(q W_q + k W_k) . w_v)", atol=1e-10)
        expect_close(out[b], ref_w @ v[b].numpy(), f"the output of batch item {b} with {name} (weights @ values)", atol=1e-10)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_AdditiveAttention_masks", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: (B, 1, n) and (B, m, n) masks; a fully masked query gets zero weights and a zero output.
### BEGIN HIDDEN TESTS
torch.manual_seed(2)
attention = AdditiveAttention(4, 4, 8).double()
q, k, v = torch.randn(2, 3, 4, dtype=torch.float64), torch.randn(2, 5, 4, dtype=torch.float64), torch.randn(2, 5, 3, dtype=torch.float64)
pad = torch.tensor([[True, True, True, False, False], [True, True, True, True, True]])[:, None, :]
with torch.no_grad():
    out, w = attention(q, k, v, pad)
assert torch.all(w[0, :, 3:] == 0), "with a (B, 1, n) padding mask, batch item 0 must give keys 3 and 4 weight 0"
assert w[0, :, :3].sum().item() > 0, "mask True means 'may attend': keys 0-2 of batch item 0 must get the weight"
expect_close(w.sum(-1), torch.ones(2, 3), "the sum of each query's weights under a (B, 1, n) mask")
full = torch.ones(2, 3, 5, dtype=torch.bool)
full[1, 2] = False  # query 2 of batch item 1 may attend to nothing
with torch.no_grad():
    out, w = attention(q, k, v, full)
expect_close(w[1, 2], torch.zeros(5), "the weights of a fully masked query (zeros, not nan)")
expect_close(out[1, 2], torch.zeros(3), "the output of a fully masked query (a zero vector)")
expect_close(w[0].sum(-1), torch.ones(3), "the weight sums of batch item 0 under a (B, m, n) mask that allows every key")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_AdditiveAttention_gradients", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden test: gradients stay finite when a query is fully masked (so such a batch can still be trained on).
### BEGIN HIDDEN TESTS
torch.manual_seed(2)
attention = AdditiveAttention(4, 4, 8).double()
q = torch.randn(2, 3, 4, dtype=torch.float64)
k = torch.randn(2, 5, 4, dtype=torch.float64)
v = torch.randn(2, 5, 3, dtype=torch.float64)
full = torch.ones(2, 3, 5, dtype=torch.bool)
full[1, 2] = False  # query 2 of batch item 1 may attend to nothing
# The gradients of out.sum() + w.sum() (gradients_of runs the backward pass where your module is).
_, grads, parameter_grads = gradients_of(attention, (q, k, v, full), wrt=(0, 1, 2), pick=None)
for name, grad in [("queries", grads[0]), ("keys", grads[1]), ("values", grads[2])] + list(parameter_grads.items()):
    assert grad is not None and torch.isfinite(grad).all(), (
        f"the gradient with respect to {name} is not finite when a query is fully masked. A row of only -inf "
        "scores makes softmax nan, and nan gradients flow back through whatever was added to the scores: give "
        "fully masked rows finite scores before softmax (masked_fill or torch.where), then set their weights to 0")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_AdditiveAttention_dtypes", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: float32 and float64, batch size 1, a single query and a single key.
### BEGIN HIDDEN TESTS
for dtype in (torch.float32, torch.float64):
    torch.manual_seed(3)
    attention = AdditiveAttention(2, 3, 4).to(dtype)
    for B, m, n in [(1, 1, 1), (1, 4, 2), (3, 1, 5)]:
        out, w = attention(torch.randn(B, m, 2, dtype=dtype), torch.randn(B, n, 3, dtype=dtype),
                           torch.randn(B, n, 6, dtype=dtype), torch.ones(B, 1, n, dtype=torch.bool))
        assert out.dtype == dtype and w.dtype == dtype, f"in {dtype} the outputs must stay {dtype}, got {out.dtype}"
        expect_shape(out, (B, m, 6), f"the output for B={B}, m={m}, n={n} in {dtype}")
        expect_close(w.sum(-1), torch.ones(B, m), f"the weight sums for B={B}, m={m}, n={n} in {dtype}", atol=1e-6)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "seq2seq_md", "locked": true, "schema_version": 3, "solution": false}
# ## 4. An encoder–decoder that learns to align (4 points)
#
# The task: read a sequence of 3 to 8 digits and write it reversed. Batches
# hold sequences of different lengths, padded at the end with `PAD`. The cell
# below gives you everything but the attention:
#
# - `Encoder`: embeddings and a bidirectional GRU; it returns one state per
#   source position, `encoder_outputs (B, n, HIDDEN)`, and an initial decoder
#   state `(B, HIDDEN)`. It is kept simple: its GRU runs over the padding too
#   (it does not pack the sequences), so the encoder states of a short
#   sequence depend a little on how much padding its batch has, and the
#   backward direction starts from the padding. Your attention mask still keeps
#   the padding positions themselves out of the context. The book's chapter 2
#   packs its sequences (`nn.utils.rnn.pack_padded_sequence`) so that no state
#   reads the padding; this notebook's grading was calibrated with the simple
#   encoder, so it stays as it is;
# - `Decoder`: at each output step $t$ it updates its GRU state
#   $\mathbf{s}_t$, then asks `decoder_attention(self.attention, s_t, encoder_outputs, source_mask)`
#   for a context vector, and predicts the next digit from $[\mathbf{s}_t, \text{context}]$;
# - `train_reversal(build_model)` seeds PyTorch, calls `build_model()` and
#   trains the model for 400 steps with Adam and gradient clipping (a few
#   seconds); `evaluate_reversal(model)`
#   decodes 500 fresh sequences greedily and returns the digit accuracy, the
#   share of output digits whose largest attention weight is on the true source
#   position, and an example's weights.

# %% nbgrader={"grade": false, "grade_id": "seq2seq_setup", "locked": true, "schema_version": 3, "solution": false}
PAD, BOS, VOCAB, HIDDEN, MIN_LEN, MAX_LEN = 10, 11, 12, 32, 3, 8


def make_reversal_batch(batch_size, generator, min_len=MIN_LEN, max_len=MAX_LEN):
    """Random digit sequences and their reversals: (source, target, lengths), padded to max_len with PAD."""
    lengths = torch.randint(min_len, max_len + 1, (batch_size,), generator=generator)
    positions = torch.arange(max_len)
    padding = positions[None] >= lengths[:, None]
    source = torch.randint(0, 10, (batch_size, max_len), generator=generator).masked_fill(padding, PAD)
    reversed_index = (lengths[:, None] - 1 - positions[None]).clamp(min=0)
    target = torch.gather(source, 1, reversed_index).masked_fill(padding, PAD)
    return source, target, lengths


class Encoder(nn.Module):
    """Embeddings and a bidirectional GRU: source (B, n) -> (outputs (B, n, HIDDEN), state (B, HIDDEN))."""

    def __init__(self, hidden=HIDDEN):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True, bidirectional=True)
        self.merge = nn.Linear(2 * hidden, hidden)
        self.init_state = nn.Linear(2 * hidden, hidden)

    def forward(self, source):
        outputs, last = self.rnn(self.embed(source))
        return self.merge(outputs), torch.tanh(self.init_state(torch.cat([last[0], last[1]], dim=-1)))


class Decoder(nn.Module):
    """A GRU decoder that consults `attention` over the encoder outputs at every step."""

    def __init__(self, attention, hidden=HIDDEN):
        super().__init__()
        self.attention = attention
        self.embed = nn.Embedding(VOCAB, hidden)
        self.cell = nn.GRUCell(hidden, hidden)
        self.predict = nn.Linear(2 * hidden, VOCAB)

    def step(self, token, state, encoder_outputs, source_mask):
        """One output step: (logits (B, VOCAB), new state (B, HIDDEN), attention weights (B, n))."""
        state = self.cell(self.embed(token), state)
        context, weights = decoder_attention(self.attention, state, encoder_outputs, source_mask)
        return self.predict(torch.cat([state, context], dim=-1)), state, weights


class Seq2Seq(nn.Module):
    """Encoder and decoder; forward uses teacher forcing and returns (logits (B, T, VOCAB), weights (B, T, n))."""

    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder

    def forward(self, source, target):
        encoder_outputs, state = self.encoder(source)
        source_mask = source != PAD
        inputs = torch.cat([torch.full_like(target[:, :1], BOS), target[:, :-1]], dim=1)
        logits, weights = [], []
        for t in range(target.shape[1]):
            step_logits, state, step_weights = self.decoder.step(inputs[:, t], state, encoder_outputs, source_mask)
            logits.append(step_logits)
            weights.append(step_weights)
        return torch.stack(logits, dim=1), torch.stack(weights, dim=1)

    @torch.no_grad()
    def generate(self, source, steps):
        """Greedy decoding: (predictions (B, steps), weights (B, steps, n))."""
        encoder_outputs, state = self.encoder(source)
        source_mask = source != PAD
        token = torch.full(source.shape[:1], BOS, dtype=torch.long)
        predictions, weights = [], []
        for _ in range(steps):
            logits, state, step_weights = self.decoder.step(token, state, encoder_outputs, source_mask)
            token = logits.argmax(dim=-1)
            predictions.append(token)
            weights.append(step_weights)
        return torch.stack(predictions, dim=1), torch.stack(weights, dim=1)


def train_reversal(build_model, steps=400, batch_size=64, seed=0):
    """Seed, build with build_model(), train with Adam and clipped gradients; returns (model, list of losses)."""
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    model = build_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        source, target, _ = make_reversal_batch(batch_size, generator)
        logits, _ = model(source, target)
        loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), target.reshape(-1), ignore_index=PAD)
        optimizer.zero_grad()
        loss.backward()
        # Clipping keeps a rare large gradient (GRU and attention early in training) from undoing progress.
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return model, losses


def evaluate_reversal(model, n=500, seed=1):
    """(digit accuracy, share of digits whose attention argmax is the true source position, example weights)."""
    generator = torch.Generator().manual_seed(seed)
    source, target, lengths = make_reversal_batch(n, generator)
    predictions, weights = model.generate(source, MAX_LEN)
    valid = target != PAD
    accuracy = ((predictions == target) & valid).sum().item() / valid.sum().item()
    true_position = lengths[:, None] - 1 - torch.arange(MAX_LEN)[None]
    aligned = ((weights.argmax(dim=-1) == true_position) & valid).sum().item() / valid.sum().item()
    return accuracy, aligned, weights[0, : lengths[0], : lengths[0]]


# %% [markdown] nbgrader={"grade": false, "grade_id": "wiring_md", "locked": true, "schema_version": 3, "solution": false}
# Now wire your attention in:
#
# 1. `decoder_attention(attention, state, encoder_outputs, source_mask)`: the
#    decoder state `state (B, HIDDEN)` is the query; the encoder outputs
#    `(B, n, HIDDEN)` are both keys and values; `source_mask (B, n)` is `True`
#    at real digits and `False` at padding. Call `attention` with the shapes
#    your module expects and return `(context (B, HIDDEN), weights (B, n))`.
# 2. `build_model()`: return `Seq2Seq(Encoder(), Decoder(attention))` with an
#    `AdditiveAttention` whose query, key and hidden sizes are all `HIDDEN`.

# %% nbgrader={"grade": false, "grade_id": "decoder_attention", "locked": false, "schema_version": 3, "solution": true}
def decoder_attention(attention, state, encoder_outputs, source_mask):
    """Attend from the decoder state (B, hidden) over encoder outputs (B, n, hidden): -> (context (B, hidden), weights (B, n))."""
    ### BEGIN SOLUTION
    context, weights = attention(state[:, None, :], encoder_outputs, encoder_outputs, source_mask[:, None, :])
    return context[:, 0], weights[:, 0]
    ### END SOLUTION


def build_model():
    """The encoder-decoder of this exercise with your AdditiveAttention in the decoder."""
    ### BEGIN SOLUTION
    return Seq2Seq(Encoder(), Decoder(AdditiveAttention(HIDDEN, HIDDEN, HIDDEN)))
    ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "training_run", "locked": true, "schema_version": 3, "solution": false}
# Train (a few seconds) and evaluate. This cell is what the tests below grade.
model, losses = train_reversal(build_model)
accuracy, alignment, example_weights = evaluate_reversal(model)
print(f"loss {losses[0]:.2f} -> {losses[-1]:.3f}; accuracy {accuracy:.3f}; attention on the true position {alignment:.3f}")

# %% [markdown] nbgrader={"grade": false, "grade_id": "plot_md", "locked": true, "schema_version": 3, "solution": false}
# Optional: look at the alignment. For a reversal, the weights should form an
# anti-diagonal.
#
# ```python
# import matplotlib.pyplot as plt
# plt.imshow(example_weights, cmap="cividis")
# plt.xlabel("source position"); plt.ylabel("output step"); plt.colorbar(label="weight")
# ```

# %% nbgrader={"grade": true, "grade_id": "test_decoder_attention", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: shapes of one decoder step, and padding gets no weight.
def check_decoder_attention():
    torch.manual_seed(4)
    encoder_outputs = torch.randn(2, 5, HIDDEN)
    source_mask = torch.tensor([[True, True, True, False, False], [True] * 5])
    attention = AdditiveAttention(HIDDEN, HIDDEN, HIDDEN)
    context, weights = decoder_attention(attention, torch.randn(2, HIDDEN), encoder_outputs, source_mask)
    expect_shape(context, (2, HIDDEN), "the context vector of one decoder step")
    expect_shape(weights, (2, 5), "the attention weights of one decoder step")
    assert torch.all(weights[0, 3:] == 0), "the padding positions (source_mask False) must get weight 0"
    assert isinstance(build_model(), Seq2Seq), "build_model() must return a Seq2Seq"


references = {}  # the grader puts a correct AdditiveAttention here
### BEGIN HIDDEN TESTS
references = {"AdditiveAttention": _AdditiveAttentionOracle}
### END HIDDEN TESTS
retry_with_reference(check_decoder_attention, references)

# %% nbgrader={"grade": true, "grade_id": "test_decoder_attention_accuracy", "locked": true, "points": 1.5, "schema_version": 3, "solution": false}
# Hidden test: the trained model reverses at least 85% of the digits of fresh sequences.
### BEGIN HIDDEN TESTS
# Calibrated by benchmarks/calibrate_reversal_training.py: correct answers reach 0.94 or more on every seed and
# module-creation order tried; wrong wirings (no mask, flipped mask, a fixed query, a mean context) 0.77 or less.
ACCURACY_NEEDED, ALIGNMENT_NEEDED = 0.85, 0.6
_retrained = {}


def _retrained_model():
    """Your build_model and decoder_attention, trained again with a correct AdditiveAttention (once, then cached)."""
    if "model" not in _retrained:
        _retrained["model"], _ = train_reversal(build_model)
    return _retrained["model"]


def _check_trained(check):
    """check(model); if that fails, check the model trained with a correct AdditiveAttention in place of yours."""
    def run():
        check(_retrained_model() if AdditiveAttention is _AdditiveAttentionOracle else model)

    retry_with_reference(run, {"AdditiveAttention": _AdditiveAttentionOracle})


def _check_accuracy(trained):
    accuracy, _, _ = evaluate_reversal(trained)
    assert accuracy >= ACCURACY_NEEDED, (
        f"the trained model gets {accuracy:.1%} of the digits right; at least {ACCURACY_NEEDED:.0%} is expected. Check "
        "that the context depends on the decoder state (the query) and that padding is masked out.")


_check_trained(_check_accuracy)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_decoder_attention_alignment", "locked": true, "points": 1.5, "schema_version": 3, "solution": false}
# Hidden test: for at least 60% of the output digits, the largest attention weight is on the true source position.
### BEGIN HIDDEN TESTS
def _check_alignment(trained):
    _, alignment, _ = evaluate_reversal(trained)
    assert alignment >= ALIGNMENT_NEEDED, (
        f"the largest attention weight is on the true source position for only {alignment:.1%} of the digits; at "
        f"least {ALIGNMENT_NEEDED:.0%} is expected. Output step t of a sequence of length L should attend to source "
        "position L - 1 - t: the query must be the decoder's current state.")


_check_trained(_check_alignment)
### END HIDDEN TESTS
