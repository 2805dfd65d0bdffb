# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false}
# # Exercise 7: the backward pass, and FlashAttention on a CPU
#
# Chapter 4 computed exact attention in bounded memory, but only forwards.
# Training needs gradients, and autograd through a streaming loop keeps every
# block's weights: the memory is $O(mn)$ again. In this notebook you
# differentiate attention by hand, then build a `torch.autograd.Function`
# that trains in $O(m + n)$ extra memory the way FlashAttention does (Dao et
# al., 2022; Dao, 2023): it saves only the output and the logsumexp $L$ of
# each query's scores, and recomputes the weights block by block in the
# backward pass.
#
# | # | you build | points |
# |---|---|---|
# | 1 | `softmax_backward(p, grad_p, axis=-1)`: the softmax's vector–Jacobian product, without the Jacobian | 3 |
# | 2 | `attention_backward(Q, K, V, dO, mask=None)`: the gradients of attention, in NumPy; `output_row_sums(output, dO)`: a row sum you derive | 4 |
# | 3 | `merge_states(a, b)`: two partial softmax states over disjoint keys merged into one | 4 |
# | 4 | `FlashAttention` (a `torch.autograd.Function`) and `flash_attention(Q, K, V, causal=False, block_size=64)` | 7 |
# | 5 | `saved_bytes_ratio`: what autograd saves for plain attention, measured against your function | 1 |
# | | **total** | **19** |
#
# **How to work.** Replace every `raise NotImplementedError()` with your code.
# Keep the names and arguments: the grader calls them. Do not edit or delete
# test cells; the grader restores its own copy of each. The names
# `expect_shape`, `expect_close`, `retry_with_reference`,
# `reference_attention`, `gradients_of`, `saved_by`, `gradcheck_of`,
# `largest_operation_of`, `left_alive_by` and `peak_memory_of` belong to the tests: do not
# define your own with these names.
#
# **How it is graded.** The visible tests after each exercise check shapes and
# one worked example. Grading adds hidden tests to the cells marked *hidden
# tests*: your gradients against PyTorch's autograd in float64 over many
# random shapes, masks and block sizes (with the `hypothesis` library),
# causal attention with more or fewer queries than keys, queries that may
# attend to no key, scores near ±800 and states with maxima near ±1000,
# `torch.autograd.gradcheck` on more shapes than the visible one of
# exercise 4, `softmax_backward` on a last axis of 100,000
# entries, and the two resource bounds this notebook states (exercise 4, with
# their numbers): **what your `FlashAttention` keeps for the backward pass**
# (no more elements than `Q`, `K`, `V`, `O` and two per query) and **the memory
# its forward and backward passes take** (less than one `m × n` matrix). A test cell
# earns its points when it runs without an error; warnings cost nothing.
# Where your answer calls your function from an earlier exercise and only
# that function is wrong, the test runs again with a correct version of it:
# a mistake costs its points once.
#
# **Tolerances.** What is graded is the value you return, at the precision
# of its dtype (`expect_close` below): a float64 answer within `1e-8`
# absolute or `1e-6` relative, a float32 one within `1e-5` absolute or
# `1e-4` relative. So compute float64 inputs in float64: float32 arithmetic
# returned as float64 carries float32's rounding errors (about `1e-7`
# relative) under float64's tolerance, and fails wherever they exceed it.
# `gradcheck` needs float64.
#
# **Conventions.** A mask is boolean and **`True` means "may attend"**, as in
# `torch.nn.functional.scaled_dot_product_attention`. A query that may attend
# to no key has a zero output and contributes zero gradient (never NaN).
#
# The book refers to exercise N of this notebook as exercise 7.N. The whole
# notebook runs in a few seconds on one CPU core.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import math

import numpy as np
import torch

# The matrices of this notebook are small: one thread computes them fastest (more threads mostly wait for each other).
torch.set_num_threads(1)


def expect_shape(actual, shape, what):
    """Fail with a readable message unless `actual` has shape `shape`."""
    actual = tuple(np.shape(actual))
    assert actual == tuple(shape), f"{what} should have shape {tuple(shape)}, but it has shape {actual}."


def expect_close(actual, expected, what):
    """Fail with a readable message unless `actual` (NumPy or torch) matches `expected` entry by entry.

    The tolerance follows the dtype of `actual`: absolute 1e-5 and relative 1e-4 for float32 (or narrower),
    absolute 1e-8 and relative 1e-6 otherwise.
    """
    dtype = actual.dtype if torch.is_tensor(actual) or isinstance(actual, np.ndarray) else None
    low_precision = dtype in (torch.float32, torch.float16, torch.bfloat16, np.float32, np.float16)
    atol, rtol = (1e-5, 1e-4) if low_precision else (1e-8, 1e-6)
    actual = np.asarray(actual.detach() if torch.is_tensor(actual) else actual, dtype=float)
    expected = np.asarray(expected.detach() if torch.is_tensor(expected) else expected, dtype=float)
    expect_shape(actual, expected.shape, what)
    nan = np.isnan(actual) & ~np.isnan(expected)
    if nan.any():
        idx = tuple(int(i) for i in np.argwhere(nan)[0])
        raise AssertionError(f"{what} contains NaN (not a number), first at index {idx}; expected {expected[idx]:.6g}. "
                             "NaN usually comes from inf - inf, 0 / 0 or 0 * inf (a query with no allowed key?).")
    bad = ~np.isclose(actual, expected, atol=atol, rtol=rtol, equal_nan=True)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AssertionError(f"{what} is wrong at index {idx}: expected {expected[idx]:.6g}, got "
                             f"{actual[idx]:.6g} ({int(bad.sum())} of {bad.size} entries differ).")


def retry_with_reference(check, references):
    """Run `check()`; if it fails, run it again with `references` in place of your functions of those names.

    `references` maps names of earlier exercises' functions (which your answer may call) to correct versions. The
    grader fills it in; in your copy it is empty, and the test simply runs. If the test passes with them, the
    mistake is in the earlier exercise, which has already cost its points there.
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


def gradients_of(function, args, wrt=(), pick=0, cotangent=None, kwargs=None):
    """The gradients of `function(*args, **kwargs)[pick]` (the whole output if `pick` is None), summed or against
    `cotangent`, with respect to `args[i]` for each i in `wrt`: (the output, [gradient of each], {}).

    How the tests take gradients through your code; a gradient that does not reach is None.
    """
    args = list(args)
    for i in wrt:
        args[i] = torch.as_tensor(args[i]).detach().requires_grad_(True)
    out = function(*args, **(kwargs or {}))
    first = out if pick is None else out[pick]
    leaves = [args[i] for i in wrt]
    if cotangent is None:
        found = torch.autograd.grad(first.sum(), leaves, allow_unused=True)
    else:
        found = torch.autograd.grad(first, leaves, grad_outputs=cotangent, allow_unused=True)
    return out, list(found), {}


def saved_by(function, args, wrt=(), kwargs=None):
    """What autograd keeps for the backward pass of `function(*args, **kwargs)`, `args[i]` (i in `wrt`) made
    leaves that require grad: (the output, [each tensor saved_tensors_hooks' pack hook received], {path: tensor}
    of the tensors held in the attributes of the output's grad_fn: your ctx, walked through lists and dicts)."""
    args = list(args)
    for i in wrt:
        args[i] = torch.as_tensor(args[i]).detach().requires_grad_(True)
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t.detach()) or t, lambda t: t):
        out = function(*args, **(kwargs or {}))
    held = {}

    def walk(value, path, depth):
        if torch.is_tensor(value):
            held[path] = value.detach()
        elif depth < 4 and isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, f"{path}[{i}]", depth + 1)
        elif depth < 4 and isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}[{key!r}]", depth + 1)
        elif depth < 4 and hasattr(value, "__dict__") and not callable(value) and not isinstance(value, type):
            for key, item in vars(value).items():
                walk(item, f"{path}.{key}", depth + 1)

    for key, value in vars(out.grad_fn).items() if hasattr(getattr(out, "grad_fn", None), "__dict__") else ():
        walk(value, f"ctx.{key}", 1)
    return out, saved, held


def peak_memory_of(call):
    """(call(), the bytes of memory it took at its peak beyond what was held before): how the memory test of
    exercise 4 measures.

    Here Linux's own counters of this process (the peak resident memory in /proc/self/status, reset just before the
    call: Linux only). The grader counts the memory of your kernel's processes as the operating system sees it,
    beyond the tensors the test sends in.
    """
    def resident(field):
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith(field + ":"))

    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # the peak (VmHWM) starts again from what is resident now
    before = resident("VmRSS")
    result = call()
    return result, max(resident("VmHWM") - before, 0)


def largest_operation_of(function, args, wrt=(), kwargs=None):
    """The largest tensor any PyTorch operation outputs while `function(*args, **kwargs)` runs forward and backward
    (gradients of the sum of its output for `args[i]`, i in `wrt`): (its number of elements, the operation's
    name). How the tests see the blocks of exercise 4: a TorchDispatchMode sees every operation PyTorch
    dispatches, not what happens inside one (torch.utils._python_dispatch is a private module of PyTorch's)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Largest(TorchDispatchMode):
        most = (0, "")

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in (out if isinstance(out, (tuple, list)) else (out,)):
                if isinstance(t, torch.Tensor) and t.numel() > self.most[0]:
                    self.most = (t.numel(), str(func))
            return out

    args = list(args)
    for i in wrt:
        args[i] = torch.as_tensor(args[i]).detach().requires_grad_(True)
    with Largest() as seen:
        out = function(*args, **(kwargs or {}))
        first = out[0] if isinstance(out, (tuple, list)) else out
        if wrt:
            torch.autograd.grad(first.sum(), [args[i] for i in wrt], allow_unused=True)
    return seen.most


def left_alive_by(function, args, wrt=(), kwargs=None):
    """What `function(*args, **kwargs)` leaves alive (`args[i]`, i in `wrt`, made leaves that require grad): every
    tensor a PyTorch operation takes or outputs while it runs is held by a weak reference (a TorchDispatchMode; a
    tensor no operation touches is not seen), so a cache filled by an earlier call is seen when this call reads it;
    once it has returned and gc.collect() has run, with only its output and its arguments held: [(operation, shape,
    elements of its storage, storage number, whose storage: "input i", "output" or "new")] for each one still alive
    (one storage, one number).

    How the tests see what exercise 4's forward pass keeps, wherever it keeps it.
    """
    import gc
    import weakref

    from torch.utils._python_dispatch import TorchDispatchMode

    class Created(TorchDispatchMode):
        refs = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            flat = []
            for value in (*args, *(kwargs or {}).values(), *(out if isinstance(out, (tuple, list)) else (out,))):
                flat.extend(value if isinstance(value, (tuple, list)) else (value,))
            self.refs.extend((str(func), weakref.ref(t)) for t in flat if isinstance(t, torch.Tensor))
            return out

    args = list(args)
    for i in wrt:
        args[i] = torch.as_tensor(args[i]).detach().requires_grad_(True)
    seen = Created()
    seen.refs = []
    with seen:
        out = function(*args, **(kwargs or {}))
    gc.collect()
    owners = {a.untyped_storage().data_ptr(): f"input {i}" for i, a in reversed(list(enumerate(args)))
              if torch.is_tensor(a)}
    owners.setdefault(out.untyped_storage().data_ptr(), "output")
    alive, numbers = [], {}
    for operation, ref in seen.refs:
        t = ref()
        if t is not None:
            pointer = t.untyped_storage().data_ptr()
            number = numbers.setdefault(pointer, len(numbers))
            alive.append((operation, tuple(t.shape), t.untyped_storage().nbytes() // t.element_size(), number,
                          owners.get(pointer, "new")))
        del t
    return alive


def gradcheck_of(function, args, kwargs=None, **options):
    """torch.autograd.gradcheck of `function(*args, **kwargs)` at `args` (each one a leaf that requires grad)."""
    inputs = tuple(torch.as_tensor(a).detach().requires_grad_(True) for a in args)
    return torch.autograd.gradcheck(lambda *a: function(*a, **(kwargs or {})), inputs, **options)


def reference_attention(Q, K, V, mask=None):
    """Attention written with torch operations, for autograd: softmax(Q K^T / sqrt(d), masked) V. Given to you.

    Q (..., m, d), K (..., n, d), V (..., n, d_v), mask broadcastable to (..., m, n), True = may attend. A query
    that may attend to no key gets a zero output and zero gradients (never NaN).
    """
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is None:
        mask = torch.ones(scores.shape, dtype=torch.bool)
    mask = torch.as_tensor(mask, dtype=torch.bool).expand(scores.shape)
    some_key = mask.any(dim=-1, keepdim=True)
    # Masked scores are -inf; a row with no allowed key is set to 0 and its weights multiplied by 0 (no NaN).
    scores = torch.where(some_key, scores.masked_fill(~mask, -math.inf), torch.zeros_like(scores))
    return (torch.softmax(scores, dim=-1) * some_key) @ V


def causal_alignment(m, n):
    """The causal mask (m, n) of exercise 4: query i may attend to key j when j <= i + n - m. Given to you."""
    return torch.arange(n)[None, :] <= torch.arange(m)[:, None] + (n - m)


# The tests' own copies: a function of yours under these names changes nothing for them.
_reference_attention, _causal_alignment = reference_attention, causal_alignment

# %% [markdown] nbgrader={"grade": false, "grade_id": "softmax_backward_md", "locked": true, "schema_version": 3, "solution": false}
# ## 1. The softmax's backward pass (3 points)
#
# Let $\mathbf p = \operatorname{softmax}(\mathbf s)$ over $n$ scores and let
# $\mathbf g = \partial \mathcal L / \partial \mathbf p$ be the gradient of a
# loss with respect to the weights. The Jacobian of the softmax is
# $\partial p_i / \partial s_j = p_i(\delta_{ij} - p_j)$, that is
# $\operatorname{diag}(\mathbf p) - \mathbf p \mathbf p^\top$, so
#
# $$\frac{\partial \mathcal L}{\partial s_j} = \sum_i g_i\, p_i(\delta_{ij} - p_j)
#   = p_j\Big(g_j - \sum_i g_i p_i\Big),$$
#
# the gradient times the Jacobian: the *vector–Jacobian product*. (The book
# writes one query's weights as a row $\boldsymbol\alpha$ and all queries'
# weights as the matrix $A$; this notebook writes a column $\mathbf p$ and the
# matrix $P$, as the FlashAttention papers do.)
#
# Write `softmax_backward(p, grad_p, axis=-1)`: `p` is a softmax output along
# `axis` (any shape; every other axis is a batch axis) and `grad_p` the
# gradient with respect to it, of the same shape. Return the gradient with
# respect to the scores, of the same shape, **without forming the
# Jacobian**: the tests call it on a last axis of 100,000 entries, whose
# Jacobian would need 80 GB.

# %% nbgrader={"grade": false, "grade_id": "softmax_backward", "locked": false, "schema_version": 3, "solution": true}
def softmax_backward(p, grad_p, axis=-1):
    """Gradient with respect to the scores of a softmax along `axis`: p, grad_p (...) -> (...), same shape."""
    ### BEGIN SOLUTION
    p, grad_p = np.asarray(p), np.asarray(grad_p)
    # The vector-Jacobian product g^T (diag(p) - p p^T) = p * (g - p . g), one sum per slice: O(n), not O(n^2).
    return p * (grad_p - np.sum(grad_p * p, axis=axis, keepdims=True))
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_softmax_backward", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Visible test: the shape, and a worked example: p = (0.5, 0.25, 0.25) and grad_p = (1, 0, 0).
# sum(grad_p * p) = 0.5, so the gradient is p * (grad_p - 0.5) = (0.25, -0.125, -0.125).
expect_shape(softmax_backward(np.full((2, 3, 4), 0.25), np.ones((2, 3, 4))), (2, 3, 4),
             "softmax_backward of p and grad_p of shape (2, 3, 4)")
expect_close(softmax_backward(np.array([0.5, 0.25, 0.25]), np.array([1.0, 0.0, 0.0])), [0.25, -0.125, -0.125],
             "softmax_backward(p=(0.5, 0.25, 0.25), grad_p=(1, 0, 0))")
# And a softmax along axis 1 of a (2, 3, 4) array whose slices differ, against torch autograd through
# torch.softmax(scores, dim=1): the sum of grad_p * p must run along axis 1 only.
_scores = (torch.linspace(-2.0, 3.0, 24, dtype=torch.float64).reshape(2, 3, 4).cos() * 3).requires_grad_(True)
_grad_p = torch.linspace(1.0, -1.0, 24, dtype=torch.float64).reshape(2, 3, 4) ** 3
torch.softmax(_scores, dim=1).backward(_grad_p)
expect_close(softmax_backward(torch.softmax(_scores, dim=1).detach().numpy(), _grad_p.numpy(), axis=1), _scores.grad,
             "softmax_backward(p, grad_p, axis=1) for a softmax along axis 1 of a (2, 3, 4) array, against torch "
             "autograd (the sum of grad_p * p runs along axis 1 only, not the last axis)")

# %% nbgrader={"grade": true, "grade_id": "test_softmax_backward_autograd", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: agreement with torch autograd through torch.softmax, on random batches of several shapes, float64.
### BEGIN HIDDEN TESTS
def _softmax_grad_by_autograd(scores, grad_p, axis):
    """dL/dscores by torch autograd, for L with gradient grad_p with respect to softmax(scores)."""
    scores = torch.tensor(scores, requires_grad=True)
    torch.softmax(scores, dim=axis).backward(torch.tensor(grad_p))
    return scores.grad.numpy()


def _check_softmax_backward_autograd():
    rng = np.random.default_rng(71)
    for shape in [(5,), (3, 4), (2, 3, 6), (4, 1), (1, 7)]:
        scores, grad_p = rng.normal(size=shape) * 3, rng.normal(size=shape)
        p = torch.softmax(torch.tensor(scores), dim=-1).numpy()
        expect_close(softmax_backward(p, grad_p), _softmax_grad_by_autograd(scores, grad_p, -1),
                     f"softmax_backward on random p and grad_p of shape {shape} (last axis), against torch autograd")


_check_softmax_backward_autograd()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_softmax_backward_axis", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: the softmax taken along another axis (axis=0, axis=1 of a 3-D array): the sum runs along `axis` only.
### BEGIN HIDDEN TESTS
def _check_softmax_backward_axis():
    rng = np.random.default_rng(72)
    for shape, axis in [((4, 3), 0), ((2, 5, 3), 1), ((3, 2, 4), 0), ((2, 3, 4), -2)]:
        scores, grad_p = rng.normal(size=shape), rng.normal(size=shape)
        p = torch.softmax(torch.tensor(scores), dim=axis).numpy()
        expect_close(softmax_backward(p, grad_p, axis=axis), _softmax_grad_by_autograd(scores, grad_p, axis),
                     f"softmax_backward(p, grad_p, axis={axis}) for shape {shape} (the sum of grad_p * p must run "
                     f"along axis {axis}), against torch autograd")


_check_softmax_backward_axis()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_softmax_backward_large", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: a last axis of 100,000 entries (2 rows), whose Jacobian (100,000 x 100,000) would need 80 GB.
### BEGIN HIDDEN TESTS
def _check_softmax_backward_large():
    rng = np.random.default_rng(73)
    scores, grad_p = rng.normal(size=(2, 100_000)), rng.normal(size=(2, 100_000))
    p = torch.softmax(torch.tensor(scores), dim=-1).numpy()
    try:
        got = softmax_backward(p, grad_p)
    except MemoryError:
        raise AssertionError("softmax_backward ran out of memory on a last axis of 100,000 entries: do not form the "
                             "100,000 x 100,000 Jacobian (80 GB in float64); p * (grad_p - sum(grad_p * p)) needs one "
                             "sum per row") from None
    expect_close(got, _softmax_grad_by_autograd(scores, grad_p, -1),
                 "softmax_backward on p and grad_p of shape (2, 100000), against torch autograd")


_check_softmax_backward_large()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "attention_backward_md", "locked": true, "schema_version": 3, "solution": false}
# ## 2. Backpropagation through attention (4 points)
#
# For $Q\,(m, d)$, $K\,(n, d)$, $V\,(n, d_v)$ the forward pass is
#
# $$S = QK^\top/\sqrt d,\qquad P = \operatorname{softmax}(S) \text{ (each row, over the allowed keys)},\qquad O = PV.$$
#
# Given $dO = \partial\mathcal L/\partial O$ of shape $(m, d_v)$, the chain
# rule gives $dV = P^\top dO$, $dP = dO\,V^\top$, $dS$ from $dP$ through the
# softmax of each row (exercise 1), and $dQ = dS\,K/\sqrt d$,
# $dK = dS^\top Q/\sqrt d$. The row sums $D_i = \sum_j P_{ij}\,dP_{ij}$ that
# the softmax needs (exercise 1's $\sum_i g_i p_i$, one per query) can also be
# had without $P$: you derive how at the end of this exercise.
#
# Write `attention_backward(Q, K, V, dO, mask=None)` for 2-D NumPy arrays,
# returning `(dQ, dK, dV)` with the shapes of `Q`, `K`, `V`. `mask` is `None`
# (every query may attend to every key) or a boolean `(m, n)` array, `True` =
# may attend. A masked key gets weight 0; a query whose row of the mask is all
# `False` has a zero output and contributes **zero** to every gradient (and
# its own `dQ` row is zero). You may call your `softmax_backward` (and your
# `output_row_sums`, below).

# %% nbgrader={"grade": false, "grade_id": "attention_backward", "locked": false, "schema_version": 3, "solution": true}
def attention_backward(Q, K, V, dO, mask=None):
    """Gradients of O = softmax(Q K^T / sqrt(d), masked) V: Q (m, d), K (n, d), V (n, d_v), dO (m, d_v) -> (dQ, dK, dV)."""
    ### BEGIN SOLUTION
    scale = 1.0 / np.sqrt(Q.shape[-1])
    scores = Q @ K.T * scale
    allowed = np.ones(scores.shape, dtype=bool) if mask is None else np.broadcast_to(np.asarray(mask, dtype=bool),
                                                                                        scores.shape)
    scores = np.where(allowed, scores, -np.inf)
    # A row with no allowed key has maximum -inf: shift it by 0 instead, so that no inf - inf appears.
    row_max = scores.max(axis=-1, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    weights = np.exp(scores - row_max)  # exp(-inf) = 0 for the masked keys
    total = weights.sum(axis=-1, keepdims=True)
    P = weights / np.where(total > 0, total, 1.0)  # all-zero rows stay zero
    dV = P.T @ dO
    dP = dO @ V.T
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True))  # the softmax's backward, row by row
    return dS @ K * scale, dS.T @ Q * scale, dV
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_attention_backward", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: the shapes, and a worked example against torch autograd (the given reference_attention).
# Q = 0 makes every weight 1/n, so dV = (1/n) * (sum of dO's rows) in every row; the test compares all three.
def _check_attention_backward_example():
    grads = attention_backward(np.zeros((2, 3)), np.ones((4, 3)), np.ones((4, 5)), np.ones((2, 5)))
    assert len(grads) == 3, "attention_backward returns the tuple (dQ, dK, dV)"
    for grad, shape, name in zip(grads, [(2, 3), (4, 3), (4, 5)], ["dQ", "dK", "dV"]):
        expect_shape(grad, shape, f"{name} for Q (2, 3), K (4, 3), V (4, 5), dO (2, 5)")
    Q, K = np.zeros((2, 2)), np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    V, dO = np.array([[1.0], [2.0], [4.0]]), np.array([[1.0], [3.0]])
    dQ, dK, dV = attention_backward(Q, K, V, dO)
    expect_close(dV, [[4 / 3], [4 / 3], [4 / 3]], "dV for Q = 0 (uniform weights 1/3), dO = (1, 3): each row (1 + 3) / 3")
    tensors = [torch.tensor(x, requires_grad=True) for x in (Q, K, V)]
    _reference_attention(*tensors).backward(torch.tensor(dO))
    expect_close(dQ, tensors[0].grad, "dQ of the worked example, against torch autograd")
    expect_close(dK, tensors[1].grad, "dK of the worked example, against torch autograd")


_references = {}  # the grader puts a correct softmax_backward here
### BEGIN HIDDEN TESTS
_references = {"softmax_backward": lambda p, g, axis=-1: p * (g - np.sum(g * p, axis=axis, keepdims=True)),
               "output_row_sums": lambda output, dO: np.einsum("ic,ic->i", dO, output)}
### END HIDDEN TESTS
retry_with_reference(_check_attention_backward_example, _references)

# %% nbgrader={"grade": true, "grade_id": "test_attention_backward_autograd", "locked": true, "points": 1.5, "schema_version": 3, "solution": false}
# Hidden tests (hypothesis): dQ, dK and dV equal torch autograd in float64 over many random shapes, without a mask.
### BEGIN HIDDEN TESTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def _attention_grads_by_autograd(Q, K, V, dO, mask=None):
    """(dQ, dK, dV) of the tests' own torch attention, by autograd, as NumPy arrays."""
    tensors = [torch.tensor(x, requires_grad=True) for x in (Q, K, V)]
    _reference_attention(*tensors, mask=None if mask is None else torch.tensor(mask)).backward(torch.tensor(dO))
    return [t.grad.numpy() for t in tensors]


# report_multiple_bugs=False in every settings of this notebook: a failing test shows its first failure's own message,
# never "Hypothesis found 2 distinct failures".
def _check_grads(Q, K, V, dO, mask, what):
    got = attention_backward(Q, K, V, dO) if mask is None else attention_backward(Q, K, V, dO, mask)
    assert len(got) == 3, "attention_backward returns the tuple (dQ, dK, dV)"
    for grad, expected, name in zip(got, _attention_grads_by_autograd(Q, K, V, dO, mask), ["dQ", "dK", "dV"]):
        expect_close(grad, expected, f"{name} {what}, against torch autograd")


@settings(max_examples=30, deadline=None, database=None, derandomize=True, report_multiple_bugs=False,
          suppress_health_check=list(HealthCheck))
@given(st.integers(1, 7), st.integers(1, 7), st.integers(1, 5), st.integers(1, 4), st.integers(0, 10_000))
def _check_attention_backward_random(m, n, d, d_v, seed):
    rng = np.random.default_rng(seed)
    Q, K = rng.normal(size=(m, d)) * 2, rng.normal(size=(n, d)) * 2
    V, dO = rng.normal(size=(n, d_v)), rng.normal(size=(m, d_v))
    _check_grads(Q, K, V, dO, None, f"for random Q ({m}, {d}), K ({n}, {d}), V ({n}, {d_v}), no mask")


retry_with_reference(_check_attention_backward_random, _references)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_attention_backward_masked", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests (hypothesis): with random masks, including queries that may attend to no key (zero gradient, no NaN).
### BEGIN HIDDEN TESTS
@settings(max_examples=30, deadline=None, database=None, derandomize=True, report_multiple_bugs=False,
          suppress_health_check=list(HealthCheck))
@given(st.integers(1, 7), st.integers(1, 7), st.integers(1, 4), st.floats(0.0, 0.9), st.integers(0, 10_000))
def _check_attention_backward_masked(m, n, d, density, seed):
    rng = np.random.default_rng(seed)
    Q, K, V, dO = rng.normal(size=(m, d)), rng.normal(size=(n, d)), rng.normal(size=(n, 3)), rng.normal(size=(m, 3))
    mask = rng.random((m, n)) < density
    mask[0] = False  # query 0 may attend to no key: its output is 0 and it adds nothing to any gradient
    _check_grads(Q, K, V, dO, mask, f"for random Q ({m}, {d}), K ({n}, {d}) and mask {mask.astype(int).tolist()} "
                 "(query 0 may attend to no key)")


retry_with_reference(_check_attention_backward_masked, _references)
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "output_row_sums_md", "locked": true, "schema_version": 3, "solution": false}
# ### Derive it: the row sums $D$ without the weights (0.5 points)
#
# FlashAttention's backward pass (exercise 4) never holds a row of $P$ whole,
# yet it needs $D_i = \sum_j P_{ij}\,dP_{ij}$ for every query $i$. Derive an
# expression for $D_i$ in the output $O$ and its gradient $dO$ alone (write
# $dP_{ij}$ out from $dP = dO\,V^\top$, and remember that $O = PV$), and write
# `output_row_sums(output, dO)`: NumPy arrays, the output `O (m, d_v)` and `dO (m, d_v)` →
# `D (m,)`. It is graded against $\sum_j P_{ij}\,dP_{ij}$ computed from the
# weights, for random $Q$, $K$, $V$, $dO$ and masks (a query with no allowed
# key has a zero row of $P$, a zero output and $D_i = 0$).

# %% nbgrader={"grade": false, "grade_id": "output_row_sums", "locked": false, "schema_version": 3, "solution": true}
def output_row_sums(output, dO):
    """The row sums D_i = sum_j P_ij dP_ij, from the output alone: output O (m, d_v), dO (m, d_v) -> D (m,)."""
    ### BEGIN SOLUTION
    # sum_j P_ij dP_ij = sum_j P_ij (dO_i . v_j) = dO_i . (sum_j P_ij v_j) = dO_i . o_i
    return np.sum(np.asarray(dO) * np.asarray(output), axis=-1)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_output_row_sums", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Visible test: the shape, and a worked example computed from the weights. P = [[0.5, 0.5], [1, 0]] and
# V = [[1, 2], [3, 0]] give O = P V = [[2, 1], [1, 2]]; with dO = [[1, -1], [2, 1]], dP = dO V^T = [[-1, 3], [4, 6]],
# so D = (0.5 * -1 + 0.5 * 3, 1 * 4 + 0 * 6) = (1, 4).
expect_shape(output_row_sums(np.ones((3, 4)), np.ones((3, 4))), (3,), "output_row_sums of O and dO of shape (3, 4)")
expect_close(output_row_sums(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([[1.0, -1.0], [2.0, 1.0]])), [1.0, 4.0],
             "output_row_sums(O, dO) for O = P V = [[2, 1], [1, 2]] and dO = [[1, -1], [2, 1]] (D computed from "
             "P = [[0.5, 0.5], [1, 0]] and dP = dO V^T = [[-1, 3], [4, 6]])")
# Hidden tests: random Q, K, V, dO and masks (query 0 may attend to no key): D against sum_j P_ij dP_ij, where the tests
# compute P from the scores; only O = P V and dO are passed to output_row_sums.
### BEGIN HIDDEN TESTS
def _check_output_row_sums():
    rng = np.random.default_rng(74)
    for m, n, d_v in [(5, 7, 3), (1, 4, 6), (6, 2, 1), (4, 4, 4)]:
        scores = rng.normal(size=(m, n)) * 2
        allowed = rng.random((m, n)) < 0.7
        allowed[0] = False  # no allowed key: a zero row of weights
        weights = np.where(allowed, np.exp(scores - scores.max(axis=-1, keepdims=True)), 0.0)
        weights /= np.maximum(weights.sum(axis=-1, keepdims=True), 1e-300)
        V, dO = rng.normal(size=(n, d_v)), rng.normal(size=(m, d_v))
        expected = np.sum(weights * (dO @ V.T), axis=-1)  # the definition, through the weights
        expect_close(output_row_sums(weights @ V, dO), expected,
                     f"output_row_sums(O, dO) for O = P V from random P ({m}, {n}) and V ({n}, {d_v}), against "
                     "sum_j P_ij dP_ij with dP = dO V^T (query 0 may attend to no key)")


_check_output_row_sums()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "merge_states_md", "locked": true, "schema_version": 3, "solution": false}
# ## 3. Merging two partial states (4 points)
#
# Attention over a set $J$ of keys can be summarised per query by a *state*
# $(\mu, \ell, \mathbf o)$: the largest score $\mu = \max_{j\in J} s_j$, the
# normaliser $\ell = \sum_{j\in J} e^{s_j - \mu}$ and the normalised partial
# output $\mathbf o = \sum_{j\in J} e^{s_j-\mu}\mathbf v_j / \ell$. Two states
# over disjoint sets of keys combine into the state over their union:
#
# $$\mu = \max(\mu_a, \mu_b),\quad
#   \ell = \ell_a e^{\mu_a-\mu} + \ell_b e^{\mu_b-\mu},\quad
#   \mathbf o = \big(\ell_a e^{\mu_a-\mu}\mathbf o_a + \ell_b e^{\mu_b-\mu}\mathbf o_b\big)/\ell .$$
#
# This is what lets key blocks be processed in any order, or in parallel
# (split-K, Flash-Decoding), and merged at the end.
#
# Write `merge_states(a, b)` where `a` and `b` are tuples `(m, l, o)` of NumPy
# arrays: `m (...,)`, `l (...,)`, `o (..., d_v)` (any leading axes, one entry
# per query). Return the merged tuple `(m, l, o)` of the same shapes.
# `m = -inf`, `l = 0`, `o = 0` is the **empty state** (no keys): merging with it
# changes nothing, and merging two empty states gives an empty state (no NaN).
# It must be stable for any finite scores: maxima of 1000 or -1000 (where
# `exp` overflows or underflows) merge to the right finite numbers.
#
# Graded: the worked examples below (1 point); merging in any order and tree
# gives full attention (1); the empty state (1); states with two leading axes,
# shape `(2, 3)` (0.5); maxima near ±1000 (0.5).

# %% nbgrader={"grade": false, "grade_id": "merge_states", "locked": false, "schema_version": 3, "solution": true}
def merge_states(a, b):
    """Merge states (m (...,), l (...,), o (..., d_v)) over disjoint key sets into the state over their union."""
    ### BEGIN SOLUTION
    m_a, l_a, o_a = (np.asarray(x) for x in a)
    m_b, l_b, o_b = (np.asarray(x) for x in b)
    m = np.maximum(m_a, m_b)
    # Two empty states have m = -inf: shift by 0 so that exp(-inf - (-inf)) never appears.
    shift = np.where(np.isfinite(m), m, 0.0)
    w_a, w_b = l_a * np.exp(m_a - shift), l_b * np.exp(m_b - shift)
    ell = w_a + w_b
    o = (w_a[..., None] * o_a + w_b[..., None] * o_b) / np.where(ell > 0, ell, 1.0)[..., None]
    return m, ell, o
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_merge_states", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: the shapes, and a worked example with one query: keys with scores (0) and (0), values (1, 0) and (3, 2).
# Each state is (m=0, l=1, o=v); merged: m = 0, l = 2, o = the average (2, 1).
_merged = merge_states((np.zeros(4), np.ones(4), np.zeros((4, 3))), (np.ones(4), np.ones(4), np.ones((4, 3))))
assert len(_merged) == 3, "merge_states returns the tuple (m, l, o)"
for _part, _shape, _name in zip(_merged, [(4,), (4,), (4, 3)], ["m", "l", "o"]):
    expect_shape(_part, _shape, f"the merged {_name} of two states of 4 queries with d_v = 3")
_m, _l, _o = merge_states((np.array([0.0]), np.array([1.0]), np.array([[1.0, 0.0]])),
                          (np.array([0.0]), np.array([1.0]), np.array([[3.0, 2.0]])))
expect_close(_m, [0.0], "the merged maximum of the worked example")
expect_close(_l, [2.0], "the merged normaliser of the worked example (1 + 1)")
expect_close(_o, [[2.0, 1.0]], "the merged output of the worked example (the average of (1, 0) and (3, 2))")
# Now with different maxima: a = (m=1, l=1, o=(1, 0)), b = (m=0, l=1, o=(3, 2)): weights e and 1.
_m, _l, _o = merge_states((np.array([1.0]), np.array([1.0]), np.array([[1.0, 0.0]])),
                          (np.array([0.0]), np.array([1.0]), np.array([[3.0, 2.0]])))
expect_close(_l, [1 + np.exp(-1)], "the merged normaliser for maxima 1 and 0 (1 + e^-1, relative to the new maximum 1)")
expect_close(_o, [[(np.e + 3) / (np.e + 1), 2 / (np.e + 1)]], "the merged output for maxima 1 and 0 (weights e and 1)")

# %% nbgrader={"grade": true, "grade_id": "test_merge_states_any_order", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests (hypothesis): keys cut into random blocks, states merged in a random order and tree, give full attention.
### BEGIN HIDDEN TESTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def _state_of_keys(scores, values):
    """The tests' own state (m, l, o) of scores (q, k) and values (k, d_v); k = 0 gives the empty state."""
    q, d_v = scores.shape[0], values.shape[-1]
    if scores.shape[1] == 0:
        return np.full(q, -np.inf), np.zeros(q), np.zeros((q, d_v))
    m = scores.max(axis=1)
    weights = np.exp(scores - m[:, None])
    return m, weights.sum(axis=1), weights @ values / weights.sum(axis=1, keepdims=True)


@settings(max_examples=30, deadline=None, database=None, derandomize=True, report_multiple_bugs=False,
          suppress_health_check=list(HealthCheck))
@given(st.integers(1, 4), st.integers(1, 12), st.integers(1, 6), st.integers(0, 10_000))
def _check_merge_any_order(queries, n, blocks, seed):
    rng = np.random.default_rng(seed)
    scores, values = rng.normal(size=(queries, n)) * 4, rng.normal(size=(n, 2))
    cuts = np.sort(rng.integers(0, n + 1, size=blocks - 1))  # blocks may be empty
    edges = [0, *cuts.tolist(), n]
    states = [_state_of_keys(scores[:, lo:hi], values[lo:hi]) for lo, hi in zip(edges[:-1], edges[1:])]
    rng.shuffle(states)  # any order
    while len(states) > 1:  # any tree: merge two states picked at random, in either argument order
        i, j = sorted(rng.choice(len(states), size=2, replace=False).tolist())
        b, a = states.pop(j), states.pop(i)
        states.append(merge_states(a, b) if rng.random() < 0.5 else merge_states(b, a))
    m, ell, o = states[0]
    what = f"the state of {queries} queries over {n} keys cut into {blocks} blocks at {edges}, merged in a random order"
    expect_close(m, scores.max(axis=1), f"m of {what} (the largest score)")
    expect_close(ell, np.exp(scores - scores.max(axis=1, keepdims=True)).sum(axis=1), f"l of {what}")
    expect_close(o, torch.softmax(torch.tensor(scores), dim=1).numpy() @ values, f"o of {what} (full attention)")


_check_merge_any_order()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_merge_states_empty", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: the empty state (m = -inf, l = 0, o = 0) changes nothing, and two empty states merge into an empty one.
### BEGIN HIDDEN TESTS
def _check_merge_empty():
    rng = np.random.default_rng(74)
    state = (rng.normal(size=3), rng.uniform(1, 3, size=3), rng.normal(size=(3, 2)))
    empty = (np.full(3, -np.inf), np.zeros(3), np.zeros((3, 2)))
    for first, second, order in [(state, empty, "merge_states(state, empty)"), (empty, state, "merge_states(empty, state)")]:
        for got, expected, name in zip(merge_states(first, second), state, ["m", "l", "o"]):
            expect_close(got, expected, f"{name} of {order}: the empty state must change nothing")
    m, ell, o = merge_states(empty, empty)
    assert np.all(np.asarray(m) == -np.inf), f"merging two empty states must give m = -inf, not {np.asarray(m).tolist()}"
    expect_close(ell, np.zeros(3), "l of two empty states merged")
    expect_close(o, np.zeros((3, 2)), "o of two empty states merged (zero, never NaN: shift by 0 when both maxima are -inf)")


_check_merge_empty()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_merge_states_batched", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: states with two leading axes, (2, 3) queries, merge as the same states laid out flat.
### BEGIN HIDDEN TESTS
def _check_merge_batched():
    rng = np.random.default_rng(75)
    scores_a, scores_b = rng.normal(size=(6, 4)) * 3, rng.normal(size=(6, 7)) * 3  # 6 queries, 4 and 7 keys
    values_a, values_b = rng.normal(size=(4, 5)), rng.normal(size=(7, 5))  # d_v = 5

    def state(scores, values):  # the tests' own state (m, l, o), laid out as (2, 3) queries
        m = scores.max(axis=1)
        weights = np.exp(scores - m[:, None])
        ell = weights.sum(axis=1)
        return m.reshape(2, 3), ell.reshape(2, 3), (weights @ values / ell[:, None]).reshape(2, 3, 5)

    try:
        m, ell, o = merge_states(state(scores_a, values_a), state(scores_b, values_b))
    except (ValueError, IndexError) as error:  # (its type only: the message is the student's code's)
        raise AssertionError(f"merge_states raised {type(error).__name__} on states of (2, 3) queries (m and l of "
                             "shape (2, 3), o of shape (2, 3, 5)): index the trailing axis, w[..., None], not "
                             "w[:, None], so that any leading axes broadcast") from None
    scores, values = np.concatenate([scores_a, scores_b], axis=1), np.concatenate([values_a, values_b])
    what = "the merge of two states of (2, 3) queries (m and l of shape (2, 3), o of shape (2, 3, 5)): use [..., None]"
    expect_shape(o, (2, 3, 5), f"o of {what}")
    expect_close(m, scores.max(axis=1).reshape(2, 3), f"m of {what}")
    expect_close(ell, np.exp(scores - scores.max(axis=1, keepdims=True)).sum(axis=1).reshape(2, 3), f"l of {what}")
    expect_close(o, (torch.softmax(torch.tensor(scores), dim=1).numpy() @ values).reshape(2, 3, 5), f"o of {what}")


_check_merge_batched()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_merge_states_stable", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: maxima near +1000 and -1000, where exp overflows and underflows: the right finite numbers.
### BEGIN HIDDEN TESTS
def _check_merge_stable():
    a = (np.array([1000.0, -1000.0]), np.array([1.0, 2.0]), np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))
    b = (np.array([999.0, -999.0]), np.array([2.0, 1.0]), np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    m, ell, o = merge_states(a, b)
    # Query 0: weights 1 and 2/e (relative to the maximum 1000); query 1: 2/e and 1 (relative to -999).
    w = np.exp(-1.0)
    what = "states with maxima 1000 and 999 (query 0), -1000 and -999 (query 1)"
    for name, got in [("m", m), ("l", ell), ("o", o)]:
        assert np.all(np.isfinite(np.asarray(got, dtype=float))), (
            f"{name} of {what} is not finite: {np.asarray(got).tolist()}; subtract the common maximum before exp, so "
            "that no exp(1000) or exp(-1000) is formed")
    expect_close(m, [1000.0, -999.0], f"m of {what}")
    expect_close(ell, [1 + 2 * w, 2 * w + 1], f"l of {what} (relative to the merged maximum; exp(-1000) underflows "
                                               "to 0, so weigh each state by exp(m - merged m), never exp(m))")
    expect_close(o, [[1 / (1 + 2 * w), 2 * w / (1 + 2 * w), 0.0], [0.0, 2 * w / (2 * w + 1), 1 / (2 * w + 1)]],
                 f"o of {what}")


_check_merge_stable()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "FlashAttention_md", "locked": true, "schema_version": 3, "solution": false}
# ## 4. FlashAttention: a backward pass in O(m + n) extra memory (7 points)
#
# Autograd through plain attention saves the $(m, n)$ weights for the
# backward pass. FlashAttention saves only the output $O$ and, for each query,
# the logsumexp of its scores $L_i = \mu_i + \log \ell_i$ (in the notation of
# exercise 3). In the backward pass it recomputes each block's weights as
# $P_{ij} = e^{S_{ij} - L_i}$ and needs $D_i = \sum_j P_{ij}\,dP_{ij}$, which
# exercise 2 computes without $P$.
#
# Write `FlashAttention`, a `torch.autograd.Function`, and
# `flash_attention(Q, K, V, causal=False, block_size=64)`, which returns
# `FlashAttention.apply(...)`, in the cell below. `Q (B, H, m, d)`,
# `K (B, H, n, d)`, `V (B, H, n, d_v)` → `O (B, H, m, d_v)`, with the scale
# $1/\sqrt d$.
#
# - **Forward:** go over the keys in blocks of `block_size` with a running
#   maximum and normaliser (chapter 4's online softmax; you may also cut the
#   queries into blocks). Save for the backward pass, with
#   `ctx.save_for_backward` only, `Q`, `K`, `V`, `O` and `L (B, H, m)`; keep
#   plain Python values (such as `causal` and `block_size`) as attributes of
#   `ctx`, and no other tensor.
# - **Backward:** from `dO`, recompute the weights block by block from `L`
#   and return `dQ`, `dK`, `dV` (and `None` for `causal` and `block_size`).
# - **Causal:** with `causal=True`, query `i` may attend to key `j` when
#   `j <= i + n - m` (the last query is aligned with the last key; for
#   `m = n` this is `scaled_dot_product_attention(..., is_causal=True)`, and
#   `causal_alignment(m, n)`, given above, is this mask). Blocks of keys that
#   every query of a block may not see can be skipped.
# - A query with **no allowed key** (causal with `m > n`) gets a zero output,
#   a zero gradient and `L = -inf` (`+inf`, flash-attn's convention, is
#   accepted too).
# - **Stable for any finite scores:** scores near 800 or -800, where `exp`
#   overflows or underflows, give the right finite output and gradients.
#
# Gradients must equal autograd of the same attention in float64, for any
# `block_size` (also 1, and larger than `m` and `n`). A visible test runs
# `torch.autograd.gradcheck` on your function, the standard check of a custom
# `autograd.Function`: run it yourself on small float64 inputs while you work.
# The values of your gradients are graded in one test cell,
# `test_FlashAttention_gradients` (2 of the 7 points). The causal, no-key and
# stability tests compare your gradients with your own on an equivalent
# problem (each query alone over the keys it may see; only the queries that
# have a key; the same scores shifted near 0), so a wrong gradient costs its
# points once.
#
# **The memory bounds (tested, with these numbers):**
#
# - *What is kept for the backward pass.* With `B = H = 1`, `m = n = 96`,
#   `d = d_v = 8`, `block_size=32`, causal or not, every tensor autograd saves
#   (read with `torch.autograd.graph.saved_tensors_hooks`) and every tensor
#   held in the attributes of `ctx` (walked through lists, tuples, dicts and
#   objects) hold together at most the elements of `Q`, `K`, `V`, `O` and two
#   per query: 3,264, where the weights alone have `m·n = 9,216`. And nothing
#   else the forward pass creates or reads outlives it, wherever it is kept (a
#   global, a cache, an attribute of the class): once the forward pass has
#   returned, the tensors its operations took or produced that are still alive
#   (seen with `left_alive_by`, after `gc.collect()`) hold, besides `Q`, `K`,
#   `V` and `O`, at most two numbers per query (`L`, or FlashAttention-1's
#   maximum and sum): 192, not counting single numbers (a constant such as
#   `torch.tensor(-math.inf)`).
# - *What the passes hold while they run.* With `B = H = 1`, `m = n = 96`,
#   `d = d_v = 8`, `block_size=32`, causal or not, no PyTorch operation of the
#   forward or the backward pass outputs a tensor of `m·n = 9,216` elements or
#   more (seen with `largest_operation_of`; a block of scores has
#   `96 × 32 = 3,072`; mask each block, not the whole matrix).
#   And with `B = H = 1`, `m = n = 2048`, `d = d_v = 64`, float64,
#   `block_size=64`, causal or not, the forward and the backward pass together take less
#   than 32 MiB of memory at their peak beyond the inputs, the size of one
#   `2048 × 2048` float64 matrix: never form the whole `(m, n)` scores or
#   weights, in either pass.

# %% nbgrader={"grade": false, "grade_id": "FlashAttention", "locked": false, "schema_version": 3, "solution": true}
class FlashAttention(torch.autograd.Function):
    """Attention that saves Q, K, V, O and the logsumexp L (B, H, m), and recomputes the weights backwards."""

    @staticmethod
    def forward(ctx, Q, K, V, causal=False, block_size=64):
        """Q (B, H, m, d), K (B, H, n, d), V (B, H, n, d_v) -> O (B, H, m, d_v), over blocks of keys."""
        ### BEGIN SOLUTION
        m, n, d_v = Q.shape[-2], K.shape[-2], V.shape[-1]
        scale = 1.0 / math.sqrt(Q.shape[-1])
        output = Q.new_zeros(*Q.shape[:-1], d_v)
        L = Q.new_full(Q.shape[:-1], -math.inf)
        for i0 in range(0, m, block_size):
            i1 = min(i0 + block_size, m)
            q = Q[..., i0:i1, :]
            run_max = Q.new_full((*Q.shape[:-2], i1 - i0, 1), -math.inf)
            run_sum = Q.new_zeros(*Q.shape[:-2], i1 - i0, 1)
            acc = Q.new_zeros(*Q.shape[:-2], i1 - i0, d_v)
            for j0 in range(0, n, block_size):
                if causal and j0 > i1 - 1 + n - m:
                    break  # this key block and every later one is after the last query of the block: skipped
                j1 = min(j0 + block_size, n)
                scores = q @ K[..., j0:j1, :].transpose(-2, -1) * scale
                if causal:
                    scores = scores.masked_fill(~(torch.arange(j0, j1) <= torch.arange(i0, i1)[:, None] + (n - m)), -math.inf)
                new_max = torch.maximum(run_max, scores.amax(dim=-1, keepdim=True))
                shift = torch.where(new_max == -math.inf, 0.0, new_max)  # no -inf - (-inf) for rows not yet started
                weights = torch.exp(scores - shift)
                rescale = torch.exp(run_max - shift)
                run_sum = run_sum * rescale + weights.sum(dim=-1, keepdim=True)
                acc = acc * rescale + weights @ V[..., j0:j1, :]
                run_max = new_max
            some_key = run_sum > 0
            output[..., i0:i1, :] = torch.where(some_key, acc / torch.where(some_key, run_sum, 1.0), 0.0)
            # L after the last block: mu + log(l); -inf (+ log 0 = -inf) for a query with no allowed key.
            L[..., i0:i1] = (run_max + torch.log(run_sum)).squeeze(-1)
        ctx.save_for_backward(Q, K, V, output, L)
        ctx.causal, ctx.block_size = causal, block_size
        return output
        ### END SOLUTION

    @staticmethod
    def backward(ctx, dO):
        """dO (B, H, m, d_v) -> (dQ, dK, dV, None, None), recomputing each block's weights from L."""
        ### BEGIN SOLUTION
        Q, K, V, output, L = ctx.saved_tensors
        causal, block_size = ctx.causal, ctx.block_size
        m, n = Q.shape[-2], K.shape[-2]
        scale = 1.0 / math.sqrt(Q.shape[-1])
        D = (dO * output).sum(dim=-1)  # (B, H, m): sum_j P_ij dP_ij, read from the output
        L = torch.where(L == -math.inf, math.inf, L)  # exp(S - inf) = 0: a query with no allowed key gets no weight
        dQ, dK, dV = torch.zeros_like(Q), torch.zeros_like(K), torch.zeros_like(V)
        for i0 in range(0, m, block_size):
            i1 = min(i0 + block_size, m)
            q, do = Q[..., i0:i1, :], dO[..., i0:i1, :]
            for j0 in range(0, n, block_size):
                if causal and j0 > i1 - 1 + n - m:
                    break
                j1 = min(j0 + block_size, n)
                k, v = K[..., j0:j1, :], V[..., j0:j1, :]
                weights = torch.exp(q @ k.transpose(-2, -1) * scale - L[..., i0:i1, None])
                if causal:
                    weights = weights.masked_fill(~(torch.arange(j0, j1) <= torch.arange(i0, i1)[:, None] + (n - m)), 0.0)
                dV[..., j0:j1, :] += weights.transpose(-2, -1) @ do
                d_weights = do @ v.transpose(-2, -1)
                d_scores = weights * (d_weights - D[..., i0:i1, None])
                dQ[..., i0:i1, :] += d_scores @ k * scale
                dK[..., j0:j1, :] += d_scores.transpose(-2, -1) @ q * scale
        return dQ, dK, dV, None, None
        ### END SOLUTION


def flash_attention(Q, K, V, causal=False, block_size=64):
    """FlashAttention: Q (B, H, m, d), K (B, H, n, d), V (B, H, n, d_v) -> O (B, H, m, d_v)."""
    ### BEGIN SOLUTION
    return FlashAttention.apply(Q, K, V, causal, block_size)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_FlashAttention", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Visible test: the output's shape, and a worked example of the forward pass. Q = 0 gives every key the weight 1/n, so
# the output is the mean of the values. (Your gradients are graded in test_FlashAttention_gradients, below.)
def _check_flash_example():
    _Q, _K, _V = torch.zeros(2, 3, 4, 5), torch.zeros(2, 3, 6, 5), torch.zeros(2, 3, 6, 7)
    expect_shape(flash_attention(_Q, _K, _V, block_size=4), (2, 3, 4, 7),
                 "flash_attention of Q (2, 3, 4, 5), K (2, 3, 6, 5), V (2, 3, 6, 7)")
    generator = torch.Generator().manual_seed(0)
    Q = torch.zeros(1, 1, 3, 2, dtype=torch.float64)
    K = torch.randn(1, 1, 5, 2, dtype=torch.float64, generator=generator)
    V = torch.randn(1, 1, 5, 3, dtype=torch.float64, generator=generator)
    expect_close(flash_attention(Q, K, V, block_size=2), V.mean(dim=2, keepdim=True).expand(1, 1, 3, 3),
                 "flash_attention with Q = 0 (every weight 1/5: the output is the mean of V's rows), block_size=2")


_check_flash_example()

# %% nbgrader={"grade": true, "grade_id": "test_FlashAttention_forward", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests (hypothesis): the output equals plain attention for many shapes and block sizes (not causal), float64.
### BEGIN HIDDEN TESTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_SETTINGS = settings(max_examples=30, deadline=None, database=None, derandomize=True, report_multiple_bugs=False,
                     suppress_health_check=list(HealthCheck))


def _random_qkv(seed, batch, heads, m, n, d, d_v, scale=2.0):
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(batch, heads, m, d, dtype=torch.float64, generator=generator) * scale,
            torch.randn(batch, heads, n, d, dtype=torch.float64, generator=generator) * scale,
            torch.randn(batch, heads, n, d_v, dtype=torch.float64, generator=generator),
            torch.randn(batch, heads, m, d_v, dtype=torch.float64, generator=generator))


def _shape_text(Q, K, V, causal, block_size):
    return (f"Q {tuple(Q.shape)}, K {tuple(K.shape)}, V {tuple(V.shape)}, causal={causal}, block_size={block_size}")


@_SETTINGS
@given(st.integers(1, 2), st.integers(1, 2), st.integers(1, 9), st.integers(1, 9), st.integers(1, 4),
       st.integers(1, 3), st.integers(1, 12), st.integers(0, 10_000))
def _check_flash_forward(batch, heads, m, n, d, d_v, block_size, seed):
    Q, K, V, _ = _random_qkv(seed, batch, heads, m, n, d, d_v)
    with torch.no_grad():
        got = flash_attention(Q, K, V, block_size=block_size)
        expected = _reference_attention(Q, K, V)
    expect_close(got, expected, f"the output of flash_attention for random {_shape_text(Q, K, V, False, block_size)}")


_check_flash_forward()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_FlashAttention_gradients", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Visible test: your gradients, the one cell that grades their values (a wrong dQ, dK or dV costs these points; the
# causal, no-key and stability cells below compare your gradients with your own on an equivalent problem, so the same
# mistake costs nothing there). First a worked example against autograd through the given reference_attention; then
# torch.autograd.gradcheck, the standard check of a custom torch.autograd.Function. It builds the Jacobian your backward
# pass implies (one vector-Jacobian product per output entry) and compares it with central finite differences of your
# forward pass, in float64. gradcheck_of(f, args, kwargs, **options) is
# torch.autograd.gradcheck(lambda *a: f(*a, **kwargs), args made leaves that require grad, **options).
def _check_flash_gradient_example():
    generator = torch.Generator().manual_seed(0)
    Q = torch.full((1, 1, 3, 2), 0.5, dtype=torch.float64)
    K = torch.randn(1, 1, 5, 2, dtype=torch.float64, generator=generator)
    V = torch.randn(1, 1, 5, 3, dtype=torch.float64, generator=generator)
    dO = torch.randn(1, 1, 3, 3, dtype=torch.float64, generator=generator)
    theirs = [x.clone().requires_grad_() for x in (Q, K, V)]
    _, mine, _ = gradients_of(flash_attention, (Q, K, V), wrt=(0, 1, 2), pick=None, cotangent=dO,
                              kwargs={"block_size": 2})
    _reference_attention(*theirs).backward(dO)
    for grad, reference, name in zip(mine, theirs, ["dQ", "dK", "dV"]):
        assert grad is not None, f"{name} is None: the backward pass must return dQ, dK, dV (then None, None)"
        expect_close(grad, reference.grad, f"{name} of flash_attention (Q = 0.5, 5 keys, block_size=2), "
                     "against autograd through reference_attention (is the scale 1/sqrt(d) in dQ and in dK?)")


def _visible_gradcheck():
    generator = torch.Generator().manual_seed(5)
    Q, K, V = (torch.randn(1, 1, rows, 2, dtype=torch.float64, generator=generator) for rows in (3, 4, 4))
    try:
        return gradcheck_of(flash_attention, (Q, K, V), {"block_size": 3}, raise_exception=True)
    except RuntimeError as error:  # torch's GradcheckError: where the two Jacobians differ
        raise AssertionError("torch.autograd.gradcheck fails for flash_attention(Q (1, 1, 3, 2), K (1, 1, 4, 2), "
                             "V (1, 1, 4, 2), block_size=3): the gradients your backward pass returns are not those "
                             f"of your forward pass. {str(error).splitlines()[0]}") from None


_check_flash_gradient_example()
assert _visible_gradcheck(), "torch.autograd.gradcheck of flash_attention returned False"
# Hidden tests (hypothesis): dQ, dK and dV equal torch autograd in float64 for many shapes and block sizes (not causal),
# and gradcheck for more shapes, with fewer or more queries than keys.
### BEGIN HIDDEN TESTS
def _compare_gradients(Q, K, V, dO, block_size):
    theirs = [x.clone().requires_grad_() for x in (Q, K, V)]
    _, mine, _ = gradients_of(flash_attention, (Q, K, V), wrt=(0, 1, 2), pick=None, cotangent=dO,
                              kwargs={"block_size": block_size})
    _reference_attention(*theirs).backward(dO)
    for grad, reference, name in zip(mine, theirs, ["dQ", "dK", "dV"]):
        assert grad is not None, f"{name} is None: the backward pass must return dQ, dK, dV (then None, None)"
        expect_close(grad, reference.grad, f"{name} of flash_attention for random "
                     f"{_shape_text(Q, K, V, False, block_size)}, against torch autograd")


@_SETTINGS
@given(st.integers(1, 2), st.integers(1, 2), st.integers(1, 9), st.integers(1, 9), st.integers(1, 4),
       st.integers(1, 3), st.integers(1, 12), st.integers(0, 10_000))
def _check_flash_gradients(batch, heads, m, n, d, d_v, block_size, seed):
    Q, K, V, dO = _random_qkv(seed, batch, heads, m, n, d, d_v)
    _compare_gradients(Q, K, V, dO, block_size)


def _check_flash_gradcheck():
    for m, n, block_size in [(4, 5, 2), (5, 3, 2), (3, 6, 4)]:
        Q, K, V, _ = _random_qkv(77 + m, 1, 2, m, n, 3, 2, scale=1.0)
        try:
            ok = gradcheck_of(flash_attention, (Q, K, V), kwargs={"block_size": block_size},
                              eps=1e-6, atol=1e-5, rtol=1e-4, raise_exception=True)
        except RuntimeError as error:  # torch.autograd.gradcheck.GradcheckError is a RuntimeError
            raise AssertionError(f"torch.autograd.gradcheck fails for {_shape_text(Q, K, V, False, block_size)}: "
                                 f"your backward pass disagrees with finite differences of your forward pass. "
                                 f"{str(error).splitlines()[0]}") from None
        assert ok, f"torch.autograd.gradcheck fails for {_shape_text(Q, K, V, False, block_size)}"


_check_flash_gradients()
_check_flash_gradcheck()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_FlashAttention_causal", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests (hypothesis): causal=True (query i sees key j <= i + n - m), for m <= n and m > n. The output equals
# attention with that mask (for m = n, also torch's scaled_dot_product_attention(is_causal=True)). The gradients are
# those of each query alone over the keys it may see: the sum over queries i of your own gradients of
# flash_attention(Q[..., i:i+1, :], K[..., :k, :], V[..., :k, :]) (not causal, k = i + n - m + 1 keys; none when
# k <= 0). Whether those are right is test_FlashAttention_gradients's question; this cell checks the mask.
### BEGIN HIDDEN TESTS
def _causal_by_queries(Q, K, V, dO, block_size):
    """dQ, dK, dV of causal attention as the sum over queries of your own gradients of each query alone over the keys
    it may see (not causal)."""
    m, n = Q.shape[-2], K.shape[-2]
    sums = [torch.zeros_like(Q), torch.zeros_like(K), torch.zeros_like(V)]
    for i in range(m):
        keys = i + n - m + 1
        if keys <= 0:
            continue  # a query with no allowed key adds nothing
        # (contiguous copies: a correct answer may .view() its inputs)
        alone_inputs = tuple(x.contiguous() for x in (Q[..., i:i + 1, :], K[..., :keys, :], V[..., :keys, :]))
        _, alone, _ = gradients_of(flash_attention, alone_inputs,
                                   wrt=(0, 1, 2), pick=None, cotangent=dO[..., i:i + 1, :].contiguous(),
                                   kwargs={"block_size": block_size})
        for grad, name in zip(alone, ["dQ", "dK", "dV"]):
            assert grad is not None, f"{name} is None: the backward pass must return dQ, dK, dV (then None, None)"
        sums[0][..., i:i + 1, :] += torch.as_tensor(alone[0])
        sums[1][..., :keys, :] += torch.as_tensor(alone[1])
        sums[2][..., :keys, :] += torch.as_tensor(alone[2])
    return sums


@_SETTINGS
@given(st.integers(1, 2), st.integers(1, 9), st.integers(1, 9), st.integers(1, 4), st.integers(1, 12),
       st.integers(0, 10_000))
def _check_flash_causal(heads, m, n, d, block_size, seed):
    Q, K, V, dO = _random_qkv(seed, 1, heads, m, n, d, 2)
    what = _shape_text(Q, K, V, True, block_size)
    out, mine, _ = gradients_of(flash_attention, (Q, K, V), wrt=(0, 1, 2), pick=None, cotangent=dO,
                                kwargs={"causal": True, "block_size": block_size})
    expect_close(out, _reference_attention(Q, K, V, mask=_causal_alignment(m, n)),
                 f"the output of flash_attention for random {what} (query i may attend to key j when j <= i + n - m; "
                 "the last query sees every key)")
    for grad, expected, name in zip(mine, _causal_by_queries(Q, K, V, dO, block_size), ["dQ", "dK", "dV"]):
        assert grad is not None, f"{name} is None: the backward pass must return dQ, dK, dV (then None, None)"
        expect_close(grad, expected, f"{name} of flash_attention for random {what}, against the sum over queries i "
                     "of your own gradients of query i alone over the keys it may see, flash_attention(Q[..., i:i+1, "
                     ":], K[..., :k, :], V[..., :k, :]) with k = i + n - m + 1, not causal (a key j > i + n - m must "
                     "get no gradient from query i in the backward pass either; mask the blocks the same way in both "
                     "passes)")


_check_flash_causal()


def _check_flash_causal_sdpa():
    Q, K, V, _ = _random_qkv(75, 2, 2, 7, 7, 3, 2)
    with torch.no_grad():
        expected = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=True)
        for block_size in (1, 3, 7, 64):
            expect_close(flash_attention(Q, K, V, causal=True, block_size=block_size), expected,
                         f"flash_attention(causal=True, block_size={block_size}) for m = n = 7, against "
                         "scaled_dot_product_attention(is_causal=True)")


_check_flash_causal_sdpa()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_FlashAttention_no_key", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: causal with m = 6 queries and n = 2 keys: queries 0 to 3 may attend to no key. Their output is 0, every
# gradient is finite (never NaN), their rows of dQ are 0, and they add nothing to dK and dV: the gradients of the rest
# equal your own gradients of queries 4 and 5 alone, flash_attention(Q[..., 4:, :], K, V, causal=True).
### BEGIN HIDDEN TESTS
def _check_flash_no_key():
    Q, K, V, dO = _random_qkv(76, 1, 1, 6, 2, 3, 2)
    what = "with 4 of 6 queries that may attend to no key (causal, m = 6 > n = 2, block_size=2)"
    out, mine, _ = gradients_of(flash_attention, (Q, K, V), wrt=(0, 1, 2), pick=None, cotangent=dO,
                                kwargs={"causal": True, "block_size": 2})
    expect_close(out[0, 0, :4], torch.zeros(4, 2), "the output of queries 0 to 3, which may attend to no key "
                 "(causal, m = 6 > n = 2)")
    for grad, name in zip(mine, ["dQ", "dK", "dV"]):
        assert grad is not None, f"{name} is None: the backward pass must return dQ, dK, dV (then None, None)"
        grad = torch.as_tensor(grad)
        assert bool(torch.all(torch.isfinite(grad))), (
            f"{name} {what} is not finite: {grad[0, 0].tolist()}; such a query has L = -inf, and exp(S - L) or "
            "0 * inf gives inf or NaN: give it zero weight in the backward pass (exp(S - inf) = 0)")
    expect_close(mine[0][..., :4, :], torch.zeros(1, 1, 4, 3), f"rows 0 to 3 of dQ {what} (zero gradient)")
    _, alone, _ = gradients_of(flash_attention, (Q[..., 4:, :].contiguous(), K, V), wrt=(0, 1, 2), pick=None,
                               cotangent=dO[..., 4:, :].contiguous(), kwargs={"causal": True, "block_size": 2})
    expect_close(mine[0][..., 4:, :], alone[0], f"rows 4 and 5 of dQ {what}, against your own dQ of queries 4 and 5 "
                 "alone, flash_attention(Q[..., 4:, :], K, V, causal=True)")
    for grad, expected, name in zip(mine[1:], alone[1:], ["dK", "dV"]):
        expect_close(grad, expected, f"{name} {what}, against your own {name} of queries 4 and 5 alone, "
                     "flash_attention(Q[..., 4:, :], K, V, causal=True): queries 0 to 3 must add nothing to it")


_check_flash_no_key()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_FlashAttention_no_key_L", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: the same 4 of 6 queries with no allowed key: the saved L is infinite there (-inf as the instructions
# say, or +inf as flash-attn's own code stores it), and finite for queries 4 and 5.
### BEGIN HIDDEN TESTS
def _check_flash_no_key_L():
    Q, K, V, _ = _random_qkv(76, 1, 1, 6, 2, 3, 2)
    _, saved, _ = saved_by(flash_attention, (Q, K, V), wrt=(0, 1, 2), kwargs={"causal": True, "block_size": 2})
    logsumexp = [t.detach().reshape(-1) for t in saved if t.numel() == 6]
    assert any(bool(torch.all(torch.isinf(t[:4]))) and bool(torch.all(torch.isfinite(t[4:]))) for t in logsumexp), (
        "save L (B, H, m) with ctx.save_for_backward: it must be -inf for queries 0 to 3, which may attend to no key "
        "(+inf is accepted too), and finite for queries 4 and 5; the tensors of 6 elements saved are "
        f"{[t.tolist() for t in logsumexp]}")


_check_flash_no_key_L()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_FlashAttention_stable", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: scores near 800 and -800 (exp overflows to inf and underflows to 0 there). The output is finite and equals
# the tests' own attention (torch.softmax subtracts the maximum); the gradients are finite and equal your own gradients
# of the same queries shifted to scores near 0. Every key's feature 0 is 1, so adding c to a query's feature 0 adds
# c / sqrt(d) to each of its scores: no weight changes, nor O, dQ, dV or dK's other features (dK's feature 0 is
# sum_i dS_ij Q_i0 / sqrt(d), which changes with Q_i0).
### BEGIN HIDDEN TESTS
def _check_flash_stable():
    generator = torch.Generator().manual_seed(81)
    Q, K, V, dO = (torch.randn(1, 1, rows, 4, dtype=torch.float64, generator=generator) for rows in (4, 5, 5, 4))
    K[..., 0] = 1.0
    near_zero = Q.clone()
    near_zero[..., 0] = torch.tensor([0.0, 0.0, -2.0, -2.0])
    Q[..., 0] = torch.tensor([1600.0, -1600.0, 1598.0, -1602.0])  # scores Q K^T / 2 near 800, -800, 799 and -801
    what = "flash_attention for scores near 800 (queries 0 and 2) and -800 (queries 1 and 3), block_size=2"
    out, mine, _ = gradients_of(flash_attention, (Q, K, V), wrt=(0, 1, 2), pick=None, cotangent=dO,
                                kwargs={"block_size": 2})
    expected = _reference_attention(Q, K, V)
    assert bool(torch.all(torch.isfinite(torch.as_tensor(out)))), (
        f"the output of {what} is not finite: {torch.as_tensor(out)[0, 0].tolist()}; exp(800) overflows to inf, so "
        "subtract each query's running maximum before exp (and keep L = maximum + log of the sum)")
    expect_close(out, expected, f"the output of {what} (exp(-800) underflows to 0: subtract the running maximum)")
    for grad, name in zip(mine, ["dQ", "dK", "dV"]):
        assert grad is not None, f"{name} is None: the backward pass must return dQ, dK, dV (then None, None)"
        assert bool(torch.all(torch.isfinite(torch.as_tensor(grad)))), (
            f"{name} of {what} is not finite: {torch.as_tensor(grad)[0, 0].tolist()}; recompute each block's weights "
            "as exp(S - L), never exp(S) alone (exp(800) overflows)")
    _, small, _ = gradients_of(flash_attention, (near_zero, K, V), wrt=(0, 1, 2), pick=None, cotangent=dO,
                               kwargs={"block_size": 2})
    shifted = ("your own {} of the same problem shifted to scores near 0 (Q[..., 0] = (0, 0, -2, -2); adding the same "
               "number to every score of a query changes no weight, so not {} either): at large scores, subtract the "
               "maximum, or L, before exp")
    expect_close(mine[0], small[0], f"dQ of {what}, against " + shifted.format("dQ", "dQ"))
    expect_close(mine[2], small[2], f"dV of {what}, against " + shifted.format("dV", "dV"))
    expect_close(mine[1][..., 1:], small[1][..., 1:], f"dK[..., 1:] of {what}, against "
                 + shifted.format("dK[..., 1:]", "dK's features 1 to 3"))


_check_flash_stable()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_FlashAttention_saved", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: the first memory bound: with B = H = 1, m = n = 96, d = d_v = 8, block_size=32, causal or not, what is
# kept for the backward pass (every tensor saved_tensors_hooks' pack hook receives, and every tensor held in ctx's
# attributes, walked through lists, tuples, dicts and objects) has at most the elements of Q, K, V, O and two per query;
# and what the forward pass's operations took or produced that is still alive once it returned (weak references,
# gc.collect()) holds, beside Q, K, V and O, at most two numbers per query (single numbers not counted).
### BEGIN HIDDEN TESTS
def _check_flash_saved():
    Q, K, V, _ = _random_qkv(78, 1, 1, 96, 96, 8, 8)
    allowed = 4 * 96 * 8 + 2 * 96  # Q, K, V, O and two numbers per query (L, or FlashAttention-1's maximum and sum)
    for causal in (False, True):  # a tensor saved only when causal=True counts too
        _, saved, held = saved_by(flash_attention, (Q, K, V), wrt=(0, 1, 2),
                                  kwargs={"causal": causal, "block_size": 32})
        total = sum(t.numel() for t in saved) + sum(t.numel() for t in held.values())
        shapes = [tuple(t.shape) for t in saved][:12]
        on_ctx = {name: tuple(t.shape) for name, t in list(held.items())[:12]}
        assert total <= allowed, (
            f"with causal={causal}, flash_attention keeps {total:,} elements for the backward pass (m = n = 96, "
            f"d = d_v = 8, block_size=32; saved: {len(saved)} tensors of shapes {shapes}; held on ctx: {on_ctx}), "
            f"more than the {allowed:,} of Q, K, V, "
            "O and two numbers per query (the weights alone have m·n = 9,216): save only Q, K, V, O and L, keep no "
            "other tensor on ctx, and recompute each block's weights from L in the backward pass")


def _check_flash_left_alive():
    Q, K, V, _ = _random_qkv(82, 1, 1, 96, 96, 8, 8)
    for causal in (False, True):  # a cache of causal masks is read only when causal=True
        alive = left_alive_by(flash_attention, (Q, K, V), wrt=(0, 1, 2), kwargs={"causal": causal, "block_size": 32})
        # Storages other than the inputs' and the output's, each counted once; a single number is a constant.
        kept = {number: (operation, tuple(shape), elements) for operation, shape, elements, number, owner in alive
                if owner == "new" and elements > 1}
        total = sum(elements for _, _, elements in kept.values())
        assert total <= 2 * 96, (
            f"with causal={causal}, {total:,} elements of tensors flash_attention's forward pass created or read are "
            "still alive after it returned and gc.collect() ran, besides Q, K, V and O (m = n = 96, d = d_v = 8, "
            "block_size=32; "
            f"operation, shape and elements of each storage: {list(kept.values())[:8]}), more than two numbers per "
            "query (192: L, or a maximum and a sum): keep nothing of the forward pass but O and L, not on ctx, nor in "
            "a global, a cache or an attribute of the class, and recompute each block in the backward pass")


_check_flash_saved()
_check_flash_left_alive()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_FlashAttention_memory", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: the second memory bound: no operation of the forward or backward pass outputs m·n elements or more
# (B = H = 1, m = n = 96, block_size=32, causal or not), and with B = H = 1, m = n = 2048, d = d_v = 64, float64,
# block_size=64, causal or not, the forward and backward pass together take less than 32 MiB at their peak beyond the inputs (one
# 2048 x 2048 float64 matrix).
### BEGIN HIDDEN TESTS
def _check_flash_operations():
    Q, K, V, _ = _random_qkv(81, 1, 1, 96, 96, 8, 8, scale=1.0)
    for masked in (False, True):  # (the bound holds causal or not)
        blocks = {"block_size": 32, "causal": masked}
        elements, operation = largest_operation_of(flash_attention, (Q, K, V), wrt=(0, 1, 2), kwargs=blocks)
        assert elements < 96 * 96, (
            f"an operation of flash_attention's forward or backward pass ({operation}) output a tensor of "
            f"{elements:,} elements (B = H = 1, m = n = 96, d = d_v = 8, block_size=32, causal={masked}): not less "
            "than the m·n = 9,216 of the whole score matrix. Work block by block in both passes (a block of scores "
            "has 96 x 32 = 3,072 elements; with causal=True, mask each block, not the whole matrix), and let the "
            "backward pass recompute each block's weights from L rather than run autograd through attention")


def _check_flash_memory():
    Q, K, V, dO = _random_qkv(80, 1, 1, 2048, 2048, 64, 64, scale=1.0)
    for causal in (False, True):  # the bound holds either way

        def forward_and_backward():
            return gradients_of(flash_attention, (Q, K, V), wrt=(0, 1, 2), pick=None, cotangent=dO,
                                kwargs={"block_size": 64, "causal": causal})

        # Twice unmeasured: the first calls load code and grow the allocator's heap, which later calls reuse (a
        # correct answer measured first took up to 32 MiB so). A 32 MiB (m, n) matrix is mapped afresh each time
        # (glibc maps blocks of 32 MiB or more), so an answer that forms one is measured all the same.
        forward_and_backward()
        forward_and_backward()
        _, peak = peak_memory_of(forward_and_backward)
        limit = 2048 * 2048 * 8  # bytes: one (m, n) float64 matrix, 32 MiB
        assert peak < limit, (
            f"flash_attention's forward and backward pass together took {peak / 2**20:.1f} MiB at their peak beyond "
            f"the inputs (B = H = 1, m = n = 2048, d = d_v = 64, float64, block_size=64, causal={causal}), not less "
            "than the 32 MiB of one 2048 x 2048 float64 matrix: compute the scores and weights block by block, in the "
            "forward pass (running maximum and normaliser) and in the backward pass (recomputed from L), and never "
            "hold all of them at once")


_check_flash_operations()
_check_flash_memory()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "saved_bytes_ratio_md", "locked": true, "schema_version": 3, "solution": false}
# ## 5. What the backward pass saves (1 point)
#
# Measure what autograd keeps for the backward pass.
# `torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook)` calls
# `pack_hook(tensor)` for every tensor that autograd saves while the
# `with` block runs (the hook must return what `unpack_hook` will receive; the
# tensor itself will do).
#
# The hook may receive the same memory more than once: plain attention's
# weights are saved by the softmax (for its backward) and again by the
# product with `V` (for its own), one `2048 × 2048` tensor held once; and a
# view such as `K.transpose(-2, -1)` shares the memory of `K`. Count what is
# held: every distinct *storage* once, the bytes of
# `tensor.untyped_storage()` (its `nbytes()`), told apart by its
# `data_ptr()`, as the book does.
#
# For `B = H = 1`, `m = n = 2048`, `d = d_v = 64`, float64 inputs `Q`, `K`, `V`
# that require gradients, count the bytes of the distinct storages saved by
#
# - plain attention written with torch operations, exactly
#   `torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(64), dim=-1) @ V`, and
# - your `flash_attention(Q, K, V)` (default arguments),
#
# and set `saved_bytes_ratio` to the first divided by the second (a Python
# float).

# %% nbgrader={"grade": false, "grade_id": "saved_bytes_ratio", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
def saved_bytes(function, *inputs):
    """The bytes autograd saves while `function(*inputs)` runs: each distinct storage packed, counted once."""
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda tensor: saved.append(tensor) or tensor, lambda tensor: tensor):
        function(*inputs)
    # Every saved tensor is still alive in `saved`, so two distinct storages never share an address.
    by_address = {tensor.untyped_storage().data_ptr(): tensor.untyped_storage().nbytes() for tensor in saved}
    return sum(by_address.values())


generator = torch.Generator().manual_seed(0)
Q, K, V = (torch.randn(1, 1, 2048, 64, dtype=torch.float64, generator=generator, requires_grad=True) for _ in range(3))
plain_bytes = saved_bytes(lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(64), dim=-1) @ v, Q, K, V)
flash_bytes = saved_bytes(flash_attention, Q, K, V)
saved_bytes_ratio = plain_bytes / flash_bytes
print(f"plain attention saves {plain_bytes / 2**20:.1f} MiB, flash_attention {flash_bytes / 2**20:.2f} MiB: "
      f"ratio {saved_bytes_ratio:.1f}")
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "test_saved_bytes_ratio", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Visible test: saved_bytes_ratio is a finite positive number, and larger than 1 if your flash_attention keeps no more
# than Q, K, V, O and two numbers per query (looked at for m = n = 96): plain attention also keeps the weights. (If
# your flash_attention keeps more, exercise 4's tests say so, and your ratio is measured against what it keeps.)
def _flash_keeps_little():
    try:
        _, saved, held = saved_by(flash_attention, [torch.randn(1, 1, 96, 8, dtype=torch.float64) for _ in range(3)],
                                  wrt=(0, 1, 2), kwargs={"block_size": 32})
    except Exception:
        return False
    return sum(t.numel() for t in saved) + sum(t.numel() for t in held.values()) <= 4 * 96 * 8 + 2 * 96


_ratio = float(saved_bytes_ratio)
assert math.isfinite(_ratio) and _ratio > 0, (
    f"saved_bytes_ratio is {_ratio}: it should be the bytes plain attention saves divided by the bytes "
    "flash_attention saves, a positive number")
assert _ratio > 1 or not _flash_keeps_little(), (
    f"saved_bytes_ratio is {_ratio}, but your flash_attention keeps only Q, K, V, O and L, so plain attention, which "
    "also keeps the 2048 x 2048 weights, saves more: divide plain attention's bytes by flash_attention's")

# %% nbgrader={"grade": true, "grade_id": "test_saved_bytes_ratio_value", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: the ratio is the tests' own measurement (within 1%; each distinct storage saved counted once), of plain
# attention against Q, K, V, O and L (what exercise 4 saves), or against what your flash_attention really saves (so a
# mistake there costs nothing here).
### BEGIN HIDDEN TESTS
def _bytes_saved(function, *inputs):
    _, saved, _ = saved_by(function, inputs, wrt=tuple(range(len(inputs))))
    # saved_by keeps every saved tensor alive (detached views share their storage), so no address is reused.
    return sum({t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in saved}.values())


def _check_saved_bytes_ratio():
    generator = torch.Generator().manual_seed(79)
    Q, K, V = (torch.randn(1, 1, 2048, 64, dtype=torch.float64, generator=generator, requires_grad=True)
               for _ in range(3))
    plain = _bytes_saved(lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(64), dim=-1) @ v, Q, K, V)
    expected = plain / (4 * 2048 * 64 * 8 + 2048 * 8)  # Q, K, V, O and L in float64
    value = float(saved_bytes_ratio)
    if abs(value - expected) <= 0.01 * expected:
        return
    try:
        yours = plain / _bytes_saved(flash_attention, Q, K, V)
    except Exception:
        yours = None
    assert yours is not None and abs(value - yours) <= 0.01 * yours, (
        f"saved_bytes_ratio is {value:.4g}; the tests measure {plain:,} bytes saved by plain attention (each distinct "
        "storage the pack hook receives counted once, untyped_storage().nbytes(): the weights, saved by the softmax and "
        f"by the product with V, are one 2048 x 2048 tensor) and {expected:.4g} as the ratio to "
        "Q, K, V, O and L" + (f", or {yours:.4g} to what your flash_attention saves" if yours else "")
        + ". Measure at m = n = 2048, d = 64, float64, and divide plain attention's bytes by flash_attention's")


_check_saved_bytes_ratio()
### END HIDDEN TESTS
