# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false}
# # Exercise 5: the transformer
#
# In this notebook you build a small transformer in PyTorch and look inside
# it: rotary position embeddings, the transformer block (checked against
# `torch.nn.TransformerEncoderLayer`), a function that finds *induction heads*
# (Elhage et al., 2021; Olsson et al., 2022) in attention maps, a tiny GPT
# that you train on repeated random sequences until it grows one, and a
# measurement of where attention's $n^2$ cost overtakes the feed-forward layer.
#
# | # | you build | points |
# |---|---|---|
# | 1 | `apply_rope(x, positions=None, base=10000.0)` | 3 |
# | 2 | `TransformerBlock(d_model, num_heads, d_ff, norm_first=True)`, a `torch.nn.Module` | 4 |
# | 3 | `find_induction_heads(attention, tokens)` | 3 |
# | 4 | `TinyGPT(vocab_size, d_model, num_heads, num_layers, max_len)`, trained to copy repeated sequences | 5 |
# | 5 | measure `crossover_length`: where attention's $n^2$ products overtake the feed-forward layer | 2 |
# | | **total** | **17** |
#
# **How to work.** Replace every `raise NotImplementedError()` with your code.
# Keep the names and arguments: the grader calls them. Do not edit or delete
# test cells; the grader restores its own copy of each. The notebook gives you
# `MultiHeadSelfAttention`, `count_flops`, `gradients_of`, `expect_shape`,
# `expect_close`, `VOCAB`, `SEQ_LEN`, `repeated_sequences`, `train_induction`
# and `evaluate_induction`: use them, but do not define anything else under
# these names (the grader puts the given ones back before every test).
#
# **How it is graded.** The visible tests after each exercise check shapes
# and, in exercises 1 to 4, one worked example: a small input whose right
# answer the test states and computes on its own. Run them. Grading adds
# hidden tests to the cells marked *hidden tests*: properties checked on many
# random inputs (with the `hypothesis` library), batch and head axes,
# agreement with PyTorch's
# `nn.TransformerEncoderLayer` and with a complex-number computation, and
# attention maps with planted heads. Exercise 4 is graded by training your
# `TinyGPT` for 400 steps with the given `train_induction`, as the cell
# `training_run` does, and measuring its loss and its attention; the grader
# builds it with its own correct `TransformerBlock`, so a mistake in
# exercise 2 costs points only there. A test cell earns its points when it runs
# without an error; warnings cost nothing.
#
# **Conventions.** Everything is PyTorch. A mask is boolean and **`True`
# means "may attend"**, as in `torch.nn.functional.scaled_dot_product_attention`;
# PyTorch's `nn.MultiheadAttention` and `nn.TransformerEncoderLayer` use the
# opposite polarity.
#
# **Tolerances.** The tests compare numbers entry by entry, with an absolute
# and a relative tolerance set by the dtype of your answer: `1e-5` for float64
# answers and `1e-4` for float32 ones (PyTorch's default dtype, about seven
# significant digits, which a chain of products rounds further). A float64
# answer that passes through a float32 step (for example RoPE angles computed
# from `torch.arange(0, d, 2) / d`, which is float32) stays well within `1e-5`
# on the tests' inputs. Counts of operations (exercise 5) must be exact.
#
# The book refers to exercise N of this notebook as exercise 5.N. The whole
# notebook, training included, runs in about 10 seconds on one CPU core.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import contextlib
import math
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.flop_counter import FlopCounterMode


def expect_shape(actual, shape, what):
    """Fail with a readable message unless `actual` has shape `shape`."""
    actual = tuple(np.shape(actual))
    assert actual == tuple(shape), f"{what} should have shape {tuple(shape)}, but it has shape {actual}."


def expect_close(actual, expected, what, atol=None, rtol=None):
    """Fail with a readable message unless `actual` matches `expected` entry by entry.

    The tolerance (absolute and relative) follows the dtype of `actual`: 1e-4 for float32 (or narrower), 1e-5
    otherwise, unless `atol` and `rtol` are given.
    """
    dtype = actual.dtype if torch.is_tensor(actual) or isinstance(actual, np.ndarray) else None
    low_precision = dtype in (torch.float32, torch.float16, torch.bfloat16, np.float32, np.float16)
    atol = (1e-4 if low_precision else 1e-5) if atol is None else atol
    rtol = (1e-4 if low_precision else 1e-5) if rtol is None else rtol
    actual = np.asarray(actual.detach() if torch.is_tensor(actual) else actual, dtype=float)
    expected = np.asarray(expected.detach() if torch.is_tensor(expected) else expected, dtype=float)
    expect_shape(actual, expected.shape, what)
    nan = np.isnan(actual) & ~np.isnan(expected)
    if nan.any():
        idx = tuple(int(i) for i in np.argwhere(nan)[0])
        raise AssertionError(f"{what} contains NaN, first at index {idx}; expected {expected[idx]:.6g}.")
    bad = ~np.isclose(actual, expected, atol=atol, rtol=rtol, equal_nan=True)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AssertionError(f"{what} is wrong at index {idx}: expected {expected[idx]:.6g}, got "
                             f"{actual[idx]:.6g} ({int(bad.sum())} of {bad.size} entries differ).")


class MultiHeadSelfAttention(nn.Module):
    """Chapter 3's multi-head self-attention, given: x (B, T, d_model) -> (output (B, T, d_model), weights (B, h, T, T)).

    Parameters as in chapter 3: `qkv`, an nn.Linear(d_model, 3 * d_model) whose output rows are the query, key and
    value projections in that order, and `out`, an nn.Linear(d_model, d_model). `mask` is (T, T) or (B, T, T) and
    True means "may attend"; a query that may attend to no key gets zero weights. The weights of the last call are
    also kept in `self.last_weights`, so that a model built from it can report them. It relies on PyTorch's own
    functional multi-head attention, whose boolean mask has the opposite polarity (True = may NOT attend).
    """

    def __init__(self, d_model, num_heads):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.num_heads = num_heads
        # qkv's output rows are q, then k, then v; out mixes the heads.
        self.qkv, self.out = nn.Linear(d_model, 3 * d_model), nn.Linear(d_model, d_model)
        self.last_weights = None

    def forward(self, x, mask=None):
        batch, length, d_model = x.shape
        if mask is None:
            allowed = torch.ones(length, length, dtype=torch.bool, device=x.device)
        else:
            allowed = torch.as_tensor(mask, device=x.device).bool()
        allowed = allowed.expand(batch, length, length)
        # A query with no key to attend to would get nan from softmax: let it see every key, then zero it below.
        any_key = allowed.any(dim=-1, keepdim=True)  # (B, T, 1)
        forbidden = ~(allowed | ~any_key)
        sequence_first = x.transpose(0, 1)  # (T, B, d_model), the layout of the functional API
        output, weights = F.multi_head_attention_forward(
            sequence_first, sequence_first, sequence_first, d_model, self.num_heads,
            self.qkv.weight, self.qkv.bias, None, None, False, 0.0, self.out.weight, self.out.bias,
            training=self.training, need_weights=True, average_attn_weights=False,
            attn_mask=forbidden.repeat_interleave(self.num_heads, dim=0))
        weights = weights * any_key[:, None]  # (B, h, T, T); all zero for a query without keys
        # Such a query mixes nothing, so its output is the output projection of a zero vector: the bias.
        output = torch.where(any_key, output.transpose(0, 1), self.out.bias)
        self.last_weights = weights
        return output, weights


def count_flops(fn):
    """Floating-point operations of the matrix products that calling fn() performs (2 per multiply-add).

    Uses torch.utils.flop_counter.FlopCounterMode. It counts matrix products (`@`, nn.Linear, einsum, bmm) and
    nothing else; on the CPU it does not see inside torch's fused scaled_dot_product_attention (it counts 0 there).
    """
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def gradients_of(module, args, wrt=(), pick=None):
    """The gradients of the sum of `module(*args)` (its `pick`-th output if `pick` is given) with respect to
    `args[i]` (for each i in `wrt`) and to every parameter of `module`: (the output, [gradient of each of those
    args], {parameter name: gradient}). A gradient that does not reach is None."""
    args = list(args)
    for i in wrt:
        args[i] = torch.as_tensor(args[i]).detach().requires_grad_(True)
    out = module(*args)
    first = out if pick is None else out[pick]
    named = list(module.named_parameters())
    found = torch.autograd.grad(first.sum(), [args[i] for i in wrt] + [p for _, p in named], allow_unused=True)
    return out, list(found[:len(wrt)]), {name: g for (name, _), g in zip(named, found[len(wrt):])}


@contextlib.contextmanager
def _transformer_block_is(block_class):
    """Within the with-statement, the name TransformerBlock means `block_class` (used by the tests of TinyGPT)."""
    namespace = globals()
    saved = namespace.get("TransformerBlock")
    namespace["TransformerBlock"] = block_class
    try:
        yield
    finally:
        namespace["TransformerBlock"] = saved


# %% [markdown] nbgrader={"grade": false, "grade_id": "rope_md", "locked": true, "schema_version": 3, "solution": false}
# ## 1. Rotary position embeddings (3 points)
#
# RoPE (Su et al., 2021) encodes the position of a query or key by rotating it.
# Split the $d$ features (with $d$ even) into pairs $(x_{2r}, x_{2r+1})$,
# $r = 0, \dots, d/2 - 1$, and rotate pair $r$ of the vector at position $p$ by
# the angle $p\,\theta_r$ with $\theta_r = \text{base}^{-2r/d}$:
#
# $$
# \begin{aligned}
# y_{2r}   &= x_{2r}\cos(p\theta_r) - x_{2r+1}\sin(p\theta_r),\\
# y_{2r+1} &= x_{2r}\sin(p\theta_r) + x_{2r+1}\cos(p\theta_r).
# \end{aligned}
# $$
#
# In a transformer, $x$ is one head's query or key, so $d$ is the head width
# $d_k$, not $d_\text{model}$. The pairs are *interleaved* (features 0 and 1,
# 2 and 3, ...), as in the RoFormer paper; some libraries pair feature $r$
# with $r + d/2$ instead, which is not what is asked here. Because rotations
# compose, the score $\text{RoPE}(\mathbf{q}, i) \cdot \text{RoPE}(\mathbf{k}, j)$
# of a query at position $i$ and a key at position $j$ depends on the two
# positions only through their offset $i - j$ (and, of course, on $\mathbf{q}$
# and $\mathbf{k}$).
#
# Write `apply_rope(x, positions=None, base=10000.0)` for a tensor `x` of shape
# `(..., n, d)` (any leading batch and head axes) and `positions`, a 1-D
# integer tensor of `n` positions (default `0, 1, ..., n-1`), one per row of
# the second-last axis. Return a tensor of the same shape and dtype as `x`.
# Hint: `x[..., 0::2]` and `x[..., 1::2]` are the two halves of every pair;
# `torch.stack([a, b], dim=-1).flatten(-2)` interleaves two tensors again.

# %% nbgrader={"grade": false, "grade_id": "apply_rope", "locked": false, "schema_version": 3, "solution": true}
def apply_rope(x, positions=None, base=10000.0):
    """Rotate each feature pair (2r, 2r+1) of x (..., n, d) by positions * base^(-2r/d); same shape and dtype."""
    ### BEGIN SOLUTION
    n, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(f"apply_rope needs an even number of features, got d={d}")
    if positions is None:
        positions = torch.arange(n, device=x.device)
    # Angles in float64 whatever x's dtype: positions in the thousands lose digits in float32.
    inverse_frequency = base ** (-torch.arange(0, d, 2, dtype=torch.float64, device=x.device) / d)  # (d/2,)
    angles = torch.as_tensor(positions, dtype=torch.float64, device=x.device)[:, None] * inverse_frequency
    cos, sin = torch.cos(angles).to(x.dtype), torch.sin(angles).to(x.dtype)  # (n, d/2)
    even, odd = x[..., 0::2], x[..., 1::2]
    rotated = torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1)  # (..., n, d/2, 2)
    return rotated.flatten(-2)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_apply_rope", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: shape and dtype, the default positions, and one worked example.
# (Names in test cells start with _, so that they never clash with yours.)
_pairs = torch.tensor([[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0]])
_rotated = apply_rope(_pairs)
expect_shape(_rotated, (2, 4), "apply_rope of a (2, 4) tensor")
assert _rotated.dtype == torch.float32, f"apply_rope must keep the dtype of x (float32 here), not return {_rotated.dtype}"
# Position 0 is not rotated. At position 1, d = 4: pair 0 turns by 1 radian, pair 1 by 10000^(-1/2) = 0.01 radian.
expect_close(_rotated[0], [1.0, 0.0, 1.0, 0.0], "row 0 of apply_rope(x) (position 0: no rotation)")
expect_close(_rotated[1], [math.cos(1), math.sin(1), math.cos(0.01), math.sin(0.01)],
             "row 1 of apply_rope(x) (position 1: pair 0 by 1 rad, pair 1 by 0.01 rad)")
_rotated = apply_rope(_pairs.double(), torch.tensor([0, 3]), base=100.0)
assert _rotated.dtype == torch.float64, f"apply_rope must keep the dtype of x (float64 here), not return {_rotated.dtype}"
expect_close(_rotated[1], [math.cos(3), math.sin(3), math.cos(0.3), math.sin(0.3)],
             "row 1 of apply_rope(x, positions=[0, 3], base=100) (pair 0 by 3 rad, pair 1 by 3 / 100^(1/2) rad)")

# %% nbgrader={"grade": true, "grade_id": "test_apply_rope_complex", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: agreement with a complex-number computation, with batch and head axes, any positions and base.
# (Positions in any order, odd positions and another base; the default positions with batch and head axes.)
### BEGIN HIDDEN TESTS
def _rope_by_complex_numbers(x, positions, base):
    """RoPE as multiplication of complex numbers x_2r + 1j x_2r+1 by exp(1j p theta_r), in float64."""
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * np.asarray(positions, dtype=float)[:, None] * theta)
    return np.stack([z.real, z.imag], axis=-1).reshape(x.shape)


def _check_against_complex_numbers():
    rng = np.random.default_rng(5)
    for shape, positions, base in [((3, 4), [0, 1, 2], 10000.0), ((2, 3, 5, 8), [7, 3, 1, 99, 0], 10000.0),
                                   ((4, 6), [5, 5, 11, 2], 500.0), ((1, 2, 1, 2), [13], 10.0)]:
        x = rng.normal(size=shape)
        got = apply_rope(torch.from_numpy(x), torch.tensor(positions), base=base)
        # Angles computed in float32 are a correct answer too: here they are within 1e-6 of the float64 ones.
        expect_close(got, _rope_by_complex_numbers(x, positions, base),
                     f"apply_rope for x of shape {shape}, positions {positions}, base {base}, compared with the "
                     "rotation written with complex numbers (pairs are features (2r, 2r+1), angle position * "
                     "base^(-2r/d))")


def _check_default_positions_with_batch_and_heads():
    rng = np.random.default_rng(7)
    # Batch and head sizes unlike n, so that positions taken from another axis cannot pass by chance.
    for shape in [(2, 3, 5, 8), (4, 6), (3, 2, 1, 7, 4)]:
        x = rng.normal(size=shape)
        n = shape[-2]
        what = (f"apply_rope(x) for x of shape {shape} with the default positions, which are 0, 1, ..., {n - 1} along "
                f"the second-last axis (n = x.shape[-2] = {n}), whatever the batch and head axes before it")
        try:
            got = apply_rope(torch.from_numpy(x))
        except Exception as error:
            said = (str(error).splitlines() or [""])[0][:120]  # (your message's first line: the rest is yours to read)
            raise AssertionError(f"{what}, raised {type(error).__name__}: {said}") from None
        expect_close(got, _rope_by_complex_numbers(x, np.arange(n), 10000.0), what)


_check_against_complex_numbers()
_check_default_positions_with_batch_and_heads()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_apply_rope_relative", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests (hypothesis): the score of a rotated query and key depends only on the offset of their positions.
### BEGIN HIDDEN TESTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@settings(max_examples=30, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 8), st.integers(0, 100), st.integers(0, 100), st.integers(-50, 50), st.integers(0, 10_000))
def _check_offset_only(half_d, i, j, shift, seed):
    rng = np.random.default_rng(seed)
    q, k = torch.from_numpy(rng.normal(size=(1, 2 * half_d))), torch.from_numpy(rng.normal(size=(1, 2 * half_d)))
    shift = max(shift, -min(i, j))  # keep positions non-negative
    before = float((apply_rope(q, torch.tensor([i])) * apply_rope(k, torch.tensor([j]))).sum())
    after = float((apply_rope(q, torch.tensor([i + shift])) * apply_rope(k, torch.tensor([j + shift]))).sum())
    scale = float(q.norm() * k.norm())  # float64 scores: 1e-5, relative to the largest score |q| |k|
    assert abs(before - after) <= 1e-5 * scale, (
        f"the score of a query at position {i} and a key at position {j} is {before:.6f}, but moving both by "
        f"{shift} changes it to {after:.6f}; with RoPE it may depend on the positions only through the offset "
        f"{i - j} (d = {2 * half_d})")


_check_offset_only()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_apply_rope_norm", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: a rotation keeps the length of every feature pair (2r, 2r+1).
### BEGIN HIDDEN TESTS
_features = torch.from_numpy(np.random.default_rng(6).normal(size=(2, 3, 6, 10)))
_rotated = apply_rope(_features, torch.tensor([0, 4, 9, 17, 250, 1]))
expect_shape(_rotated, _features.shape, "apply_rope of a (2, 3, 6, 10) tensor")
expect_close(_rotated[..., 0::2] ** 2 + _rotated[..., 1::2] ** 2, _features[..., 0::2] ** 2 + _features[..., 1::2] ** 2,
             "the squared length of each feature pair (2r, 2r+1) after apply_rope (a rotation must not change it)")
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "block_md", "locked": true, "schema_version": 3, "solution": false}
# ## 2. The transformer block (4 points)
#
# A transformer block wraps attention and a position-wise feed-forward layer in
# residual connections and layer normalisation. Build it from these parts,
# with exactly these attribute names:
#
# - `self.attn`: a `MultiHeadSelfAttention(d_model, num_heads)` (given above;
#   it returns `(output, weights)`);
# - `self.norm1` and `self.norm2`: two `nn.LayerNorm(d_model)`;
# - `self.ff`: `nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))`.
#
# With `norm_first=True` (pre-norm, as in GPT-2 and many later models) the
# block computes
#
# $$x \leftarrow x + \operatorname{Attn}(\operatorname{LN}_1(x)), \qquad x \leftarrow x + \operatorname{FF}(\operatorname{LN}_2(x));$$
#
# with `norm_first=False` (post-norm, as in the original transformer)
#
# $$x \leftarrow \operatorname{LN}_1(x + \operatorname{Attn}(x)), \qquad x \leftarrow \operatorname{LN}_2(x + \operatorname{FF}(x)).$$
#
# `forward(x, mask=None)` takes `x (B, T, d_model)` and a mask as in chapter 3
# (`(T, T)` or `(B, T, T)`, `True` = may attend), passes the mask to the
# attention, and returns a tensor `(B, T, d_model)`. No dropout. Given the same
# parameters, your block must equal
# `nn.TransformerEncoderLayer(d_model, num_heads, d_ff, dropout=0.0, activation="gelu", batch_first=True, norm_first=norm_first)`,
# whose `src_mask` uses the opposite polarity (True = may *not* attend). The
# tests compare the two only with masks in which every query may attend to at
# least one key: for a query that may attend to none, PyTorch's layer gives
# nan, while `MultiHeadSelfAttention` gives it zero weights (so its attention
# output is the output projection's bias).

# %% nbgrader={"grade": false, "grade_id": "TransformerBlock", "locked": false, "schema_version": 3, "solution": true}
class TransformerBlock(nn.Module):
    """Attention and feed-forward sublayers with residuals and LayerNorm: x (B, T, d_model) -> (B, T, d_model)."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__()
        ### BEGIN SOLUTION
        self.norm_first = norm_first
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))
        ### END SOLUTION

    def forward(self, x, mask=None):
        ### BEGIN SOLUTION
        if self.norm_first:
            x = x + self.attn(self.norm1(x), mask)[0]
            return x + self.ff(self.norm2(x))
        x = self.norm1(x + self.attn(x, mask)[0])
        return self.norm2(x + self.ff(x))
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_TransformerBlock", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: the parts and their shapes, the output's shape, and a worked example of the default (pre-norm)
# block without a mask. (Post-norm and masks are graded in their own hidden cells, so one mistake costs once.)
torch.manual_seed(0)
_block = TransformerBlock(8, 2, 32)
assert isinstance(getattr(_block, "attn", None), MultiHeadSelfAttention), (
    "TransformerBlock needs self.attn = MultiHeadSelfAttention(d_model, num_heads)")
for _norm in ("norm1", "norm2"):
    assert isinstance(getattr(_block, _norm, None), nn.LayerNorm), f"TransformerBlock needs self.{_norm} = nn.LayerNorm(d_model)"
_ff = getattr(_block, "ff", None)
assert isinstance(_ff, nn.Sequential) and len(_ff) == 3 and isinstance(_ff[1], nn.GELU), (
    "TransformerBlock needs self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))")
expect_shape(_ff[0].weight, (32, 8), "ff[0].weight (nn.Linear(d_model=8, d_ff=32))")
expect_shape(_ff[2].weight, (8, 32), "ff[2].weight (nn.Linear(d_ff=32, d_model=8))")
expect_shape(_block(torch.randn(3, 5, 8)), (3, 5, 8), "the output of the block for x (3, 5, 8)")
expect_shape(_block(torch.randn(3, 5, 8), torch.tril(torch.ones(5, 5, dtype=torch.bool))), (3, 5, 8),
             "the output of the block for x (3, 5, 8) with a causal (5, 5) mask")

# Worked example: d_model = 2, one head, no mask, x = (2, 0), (0, 2), (4, 0). The parameters are set so that
# each query attends uniformly to all three keys (queries and keys are 0), the values are the attention's input
# itself, the output projection is the identity, and the feed-forward layer outputs (0, 1). LayerNorm turns
# (2, 0) and (4, 0) into about (1, -1) and (0, 2) into about (-1, 1); their mean is about (1/3, -1/3). Pre-norm,
# every position adds that mean and then (0, 1): about (7/3, 2/3), (1/3, 8/3), (13/3, 2/3).
def _layer_norm(rows):
    """LayerNorm without its gain and bias (eps = 1e-5, PyTorch's default), row by row."""
    rows = np.asarray(rows, dtype=float)
    centred = rows - rows.mean(-1, keepdims=True)
    return centred / np.sqrt((centred ** 2).mean(-1, keepdims=True) + 1e-5)


_x = np.array([[2.0, 0.0], [0.0, 2.0], [4.0, 0.0]])
_uniform = np.full((3, 3), 1 / 3)  # every query: weight 1/3 on each of the three keys
_ff_out = np.array([0.0, 1.0])
_expected = _x + _uniform @ _layer_norm(_x) + _ff_out
torch.manual_seed(0)
_block = TransformerBlock(2, 1, 4).double()
with torch.no_grad():  # the block's parameters, set as described above
    _block.attn.qkv.weight.zero_()
    _block.attn.qkv.weight[4:] = torch.eye(2)  # rows 4-5: the value projection
    _block.attn.qkv.bias.zero_()
    _block.attn.out.weight.copy_(torch.eye(2))
    _block.attn.out.bias.zero_()
    _block.ff[2].weight.zero_()
    _block.ff[2].bias.copy_(torch.tensor(_ff_out))
    _out = _block(torch.tensor(_x)[None])
expect_close(_out[0], _expected, "the output of the worked example (pre-norm, d_model=2, one head attending "
             "uniformly to all three keys, values = its input, feed-forward output (0, 1); x = (2, 0), (0, 2), "
             "(4, 0); expected about (7/3, 2/3), (1/3, 8/3), (13/3, 2/3))")

# %% nbgrader={"grade": true, "grade_id": "test_TransformerBlock_pre_norm", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: with norm_first=True (the default), equal to nn.TransformerEncoderLayer, without a mask.
# Given the same (random) parameters, float64; batch 1 and length 1 included; in training mode (so no dropout).
### BEGIN HIDDEN TESTS
def _torch_layer_like(block, d_model, heads, d_ff, norm_first):
    """Randomise the parameters of `block`; return nn.TransformerEncoderLayer with the same parameters (float64)."""
    torch.manual_seed(11)
    with torch.no_grad():
        for parameter in block.parameters():
            parameter.copy_(torch.randn_like(parameter) * 0.4)
        for norm in (block.norm1, block.norm2):  # LayerNorm gains near 1, and different in the two norms
            norm.weight.add_(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = nn.TransformerEncoderLayer(d_model, heads, d_ff, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=norm_first).double()
    pairs = [(layer.self_attn.in_proj_weight, block.attn.qkv.weight), (layer.self_attn.in_proj_bias, block.attn.qkv.bias),
             (layer.self_attn.out_proj.weight, block.attn.out.weight), (layer.self_attn.out_proj.bias, block.attn.out.bias),
             (layer.linear1.weight, block.ff[0].weight), (layer.linear1.bias, block.ff[0].bias),
             (layer.linear2.weight, block.ff[2].weight), (layer.linear2.bias, block.ff[2].bias),
             (layer.norm1.weight, block.norm1.weight), (layer.norm1.bias, block.norm1.bias),
             (layer.norm2.weight, block.norm2.weight), (layer.norm2.bias, block.norm2.bias)]
    with torch.no_grad():
        for theirs, yours in pairs:
            theirs.copy_(yours)
    return layer


def _compare_with_torch(norm_first, with_masks):
    """Compare fresh TransformerBlocks with nn.TransformerEncoderLayer on several shapes (and masks), in train mode."""
    kind = "pre-norm (norm_first=True)" if norm_first else "post-norm (norm_first=False)"
    for d_model, heads, d_ff, B, T in [(8, 2, 16, 2, 5), (12, 3, 24, 1, 4), (6, 1, 10, 3, 1), (16, 4, 64, 2, 7)]:
        torch.manual_seed(d_model + T)
        # The default must be pre-norm: build it without the argument.
        block = (TransformerBlock(d_model, heads, d_ff) if norm_first else
                 TransformerBlock(d_model, heads, d_ff, norm_first=False)).double()
        layer = _torch_layer_like(block, d_model, heads, d_ff, norm_first)
        block.train()  # dropout, if any, would show here
        layer.train()
        x = torch.randn(B, T, d_model, dtype=torch.float64)
        masks = [("no mask", None)]
        if with_masks:
            per_item = torch.rand(B, T, T) < 0.6
            per_item[..., 0] = True  # every query may attend to some key (torch gives nan otherwise): as stated
            masks = [("a causal (T, T) mask", torch.tril(torch.ones(T, T, dtype=torch.bool))),
                     ("a (B, T, T) mask", per_item)]
        for name, mask in masks:
            got = block(x, mask)
            torch_mask = None if mask is None else ~(mask if mask.dim() == 2 else mask.repeat_interleave(heads, dim=0))
            expected = layer(x, src_mask=torch_mask)
            hint = "" if mask is None else " (mask True means 'may attend': pass it to self.attn unchanged)"
            expect_close(got, expected, f"the {kind} block's output for d_model={d_model}, {heads} heads, "
                         f"d_ff={d_ff}, B={B}, T={T}, {name}, compared with nn.TransformerEncoderLayer given the same "
                         f"parameters{hint}")


_compare_with_torch(norm_first=True, with_masks=False)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_TransformerBlock_post_norm", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: with norm_first=False, equal to nn.TransformerEncoderLayer(..., norm_first=False), without a mask.
### BEGIN HIDDEN TESTS
_compare_with_torch(norm_first=False, with_masks=False)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_TransformerBlock_masks", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: with causal (T, T) and per-item (B, T, T) masks, equal to nn.TransformerEncoderLayer, pre- and post-norm.
# (torch's layer is given the opposite mask, its polarity.)
# A norm placement that is wrong without a mask costs its points in its own cell: that variant is checked here only
# for what a mask decides, that a position's output does not depend on the keys it may not attend to.
### BEGIN HIDDEN TESTS
def _matches_torch_without_mask(norm_first):
    try:
        _compare_with_torch(norm_first, with_masks=False)
    except Exception:
        return False
    return True


def _check_masked_keys_do_not_matter(norm_first):
    """The output at each query must not change when only keys the mask forbids it change (evaluation mode)."""
    kind = "pre-norm (norm_first=True)" if norm_first else "post-norm (norm_first=False)"
    torch.manual_seed(21)
    B, T, d_model = 2, 6, 8
    block = TransformerBlock(d_model, 2, 16, norm_first=norm_first).double().eval()
    x = torch.randn(B, T, d_model, dtype=torch.float64)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    per_item = torch.rand(B, T, T) < 0.5
    per_item |= torch.eye(T, dtype=torch.bool)  # every query may attend to itself
    for name, mask in [("a causal (T, T) mask", causal), ("a (B, T, T) mask", per_item)]:
        full = mask.expand(B, T, T)
        with torch.no_grad():
            out = block(x, mask)
            for b in range(B):
                for t in range(T):
                    hidden = ~full[b, t]
                    if not hidden.any():
                        continue
                    changed = x.clone()
                    changed[b, hidden] += torch.randn(int(hidden.sum()), d_model, dtype=torch.float64)
                    moved = float((block(changed, mask)[b, t] - out[b, t]).abs().max())
                    assert moved < 1e-5, (
                        f"with {name}, the {kind} block's output at query {t} of item {b} changes by {moved:.3g} when "
                        f"only keys it may not attend to change: pass the mask to self.attn unchanged (True means "
                        "'may attend'; do not invert it, as nn.TransformerEncoderLayer's polarity would need)")


def _check_masks():
    for norm_first in (True, False):
        if _matches_torch_without_mask(norm_first):
            _compare_with_torch(norm_first, with_masks=True)
        else:
            _check_masked_keys_do_not_matter(norm_first)


_check_masks()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "find_md", "locked": true, "schema_version": 3, "solution": false}
# ## 3. Find the induction heads (3 points)
#
# Write `find_induction_heads(attention, tokens)` that scores every head for
# the induction pattern. `attention` is a list with one tensor of weights
# `(B, H, T, T)` per layer (as exercise 4's `TinyGPT` returns it) and `tokens` is `(B, T)`.
# Call a position $t$ of sequence $b$ *repeated* if its token occurred at an
# earlier position of the same sequence, and let $j$ be the **last** such
# earlier position ($j < t$). The score of a head is the mean, over all
# repeated positions of all sequences in the batch (each counts once), of the
# weight that query $t$ puts on key $j + 1$, the position right after the
# earlier occurrence. Positions that are not repeated are left out. Return an
# `(L, H)` tensor (or array) of scores, one row per layer; each is in $[0, 1]$.
# A batch in which no position is repeated has no score (the mean of nothing):
# the tests never pass one, and any answer there is accepted (the reference
# returns nan, 0 / 0).
#
# For example, in the tokens `5 8 3 5 8` positions 3 and 4 are repeated; the
# target of position 3 is position 1 (after the first 5) and that of
# position 4 is position 2 (after the first 8).

# %% nbgrader={"grade": false, "grade_id": "find_induction_heads", "locked": false, "schema_version": 3, "solution": true}
def find_induction_heads(attention, tokens):
    """Induction score of every head: list of L weights (B, H, T, T), tokens (B, T) -> (L, H)."""
    ### BEGIN SOLUTION
    tokens = torch.as_tensor(tokens)
    batch, length = tokens.shape
    earlier_same = torch.tril(tokens[:, :, None] == tokens[:, None, :], diagonal=-1)  # [b, t, j]: j < t, same token
    key_index = torch.arange(length).expand(batch, length, length)
    last = torch.where(earlier_same, key_index, -1).amax(dim=-1)  # (B, T), -1 where not repeated
    repeated = last >= 0
    target = (last + 1).clamp(min=0)  # last + 1 <= t; 0 (ignored) where not repeated
    scores = []
    for weights in attention:
        weights = torch.as_tensor(weights)
        index = target[:, None, :, None].expand(batch, weights.shape[1], length, 1)
        on_target = weights.gather(-1, index)[..., 0]  # (B, H, T): the weight of each query on its target
        scores.append((on_target * repeated[:, None]).sum(dim=(0, 2)) / repeated.sum())
    return torch.stack(scores)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_find_induction_heads", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: the scores of an induction head, a previous-token head and a uniform head on the tokens 5 8 3 5 8.
# One layer with three heads: an induction head, a previous-token head and a uniform causal head.
_tokens = torch.tensor([[5, 8, 3, 5, 8]])
# Positions 3 and 4 are repeated; their induction targets are positions 1 and 2.
_induction = torch.tensor([[1.0, 0, 0, 0, 0], [1.0, 0, 0, 0, 0], [1.0, 0, 0, 0, 0], [0, 1.0, 0, 0, 0], [0, 0, 1.0, 0, 0]])
_previous = torch.tensor([[1.0, 0, 0, 0, 0], [1.0, 0, 0, 0, 0], [0, 1.0, 0, 0, 0], [0, 0, 1.0, 0, 0], [0, 0, 0, 1.0, 0]])
_uniform = torch.tril(torch.ones(5, 5)) / torch.arange(1, 6)[:, None]
_weights = torch.stack([_induction, _previous, _uniform])[None]  # (B=1, H=3, T=5, T=5)
_scores = find_induction_heads([_weights], _tokens)
expect_shape(_scores, (1, 3), "the scores of 1 layer with 3 heads")
expect_close(_scores, [[1.0, 0.0, (1 / 4 + 1 / 5) / 2]],
             "the scores of an induction head, a previous-token head and a uniform causal head for the tokens 5 8 3 5 8")

# %% nbgrader={"grade": true, "grade_id": "test_find_induction_heads_oracle", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: agreement with a loop over positions on random attention maps, several layers, heads and sequences.
# Tokens occur up to five times; the mean is over all repeated positions of the batch.
### BEGIN HIDDEN TESTS
def _induction_scores(attention, tokens):
    """(layers, heads): mean weight on the position after the last earlier occurrence of each repeated token."""
    tokens = np.asarray(tokens)
    batch, length = tokens.shape
    rows, targets = [], []
    for b in range(batch):
        last_seen = {}
        for t in range(length):
            token = int(tokens[b, t])
            if token in last_seen:
                rows.append((b, t))
                targets.append(last_seen[token] + 1)
            last_seen[token] = t
    b_index, t_index = np.array(rows).T
    return np.array([[np.asarray(torch.as_tensor(w).detach()[:, h])[b_index, t_index, targets].mean()
                      for h in range(w.shape[1])] for w in attention])


def _check_against_loops():
    rng = np.random.default_rng(8)
    for batch, heads, length, vocab in [(4, 3, 12, 4), (1, 2, 9, 3), (3, 1, 15, 6)]:
        tokens = torch.from_numpy(rng.integers(0, vocab, size=(batch, length)))
        causal = np.tril(np.ones((length, length), dtype=bool))
        attention = []
        for _ in range(2):
            scores = np.where(causal, rng.normal(size=(batch, heads, length, length)) * 2, -np.inf)
            weights = np.exp(scores - scores.max(-1, keepdims=True))
            attention.append(torch.from_numpy(weights / weights.sum(-1, keepdims=True)))
        got = torch.as_tensor(find_induction_heads(attention, tokens)).detach()  # its dtype sets the tolerance
        expect_close(got, _induction_scores(attention, tokens),
                     f"the scores for {batch} sequence(s) of {length} tokens from a vocabulary of {vocab}, 2 layers "
                     f"of {heads} head(s), random attention (each repeated position of the batch counts once; the "
                     "target is the position after the LAST earlier occurrence)")


_check_against_loops()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_find_induction_heads_planted", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: a planted perfect induction head scores 1, a head on the earlier occurrence itself scores 0.
# (Not the position after it.) Every score is in [0, 1].
### BEGIN HIDDEN TESTS
def _check_planted_heads():
    rng = np.random.default_rng(9)
    batch, length = 3, 14
    tokens = rng.integers(0, 4, size=(batch, length))
    tokens[:, :4] = [0, 1, 2, 3]  # every later token is repeated, some three or more times
    planted = np.zeros((batch, 3, length, length))
    for b in range(batch):
        for t in range(length):
            earlier = [j for j in range(t) if tokens[b, j] == tokens[b, t]]
            if earlier:
                planted[b, 0, t, earlier[-1] + 1] = 1.0  # induction head: the position after the last earlier occurrence
                planted[b, 1, t, earlier[-1]] = 1.0  # duplicate-token head: the earlier occurrence itself
            else:
                planted[b, 0, t, 0] = planted[b, 1, t, 0] = 1.0
            planted[b, 2, t, : t + 1] = 1.0 / (t + 1)  # uniform over the past
    answer = torch.as_tensor(find_induction_heads([torch.from_numpy(planted)], torch.from_numpy(tokens))).detach()
    tolerance = 1e-4 if answer.dtype in (torch.float32, torch.float16, torch.bfloat16) else 1e-5  # as stated
    got = np.asarray(answer, dtype=float)
    expect_shape(got, (1, 3), "the scores of 1 layer with 3 heads")
    assert abs(got[0, 0] - 1.0) < tolerance, (
        f"a perfect induction head (all weight on the position right after the last earlier occurrence of the current "
        f"token, at every repeated position) scores {got[0, 0]:.3f}, not 1. Use the LAST earlier occurrence, and leave "
        "out the positions whose token did not occur before.")
    assert abs(got[0, 1]) < tolerance, (
        f"a head that attends to the earlier occurrence itself scores {got[0, 1]:.3f}, not 0: the target is the position "
        "right AFTER the earlier occurrence")
    assert np.all((got >= -tolerance) & (got <= 1 + tolerance)), f"scores must lie in [0, 1], got {np.round(got, 3).tolist()}"


_check_planted_heads()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "gpt_md", "locked": true, "schema_version": 3, "solution": false}
# ## 4. A tiny GPT that learns to copy (5 points)
#
# A decoder-only transformer reads tokens and predicts, at every position, the
# next token. Build `TinyGPT(vocab_size, d_model, num_heads, num_layers, max_len)`:
#
# - a token embedding `nn.Embedding(vocab_size, d_model)` plus a position
#   embedding for positions `0 .. max_len - 1`: a learned
#   `nn.Embedding(max_len, d_model)` or chapter 3's fixed sinusoidal encoding,
#   whose row for position $p$ is
#   $PE_{p,\,2r} = \sin\!\big(p / 10000^{2r/d_\text{model}}\big)$,
#   $PE_{p,\,2r+1} = \cos\!\big(p / 10000^{2r/d_\text{model}}\big)$;
# - `num_layers` blocks `TransformerBlock(d_model, num_heads, 4 * d_model)`
#   (pre-norm, the default), each given a **causal** mask, so that position $t$
#   never sees a later token;
# - a final `nn.LayerNorm(d_model)` and an output layer
#   `nn.Linear(d_model, vocab_size)` that gives the logits. Give the output
#   layer its own weight matrix; do not reuse the token embedding's. GPT-2
#   does reuse it ("weight tying"), but only with small embeddings: PyTorch's
#   default embeddings, drawn from N(0, 1), make a tied model's first logits
#   huge (chapter 5 of the book measures it), and the thresholds of the tests
#   below were calibrated without tying. Keep PyTorch's default
#   initialisation.
#
# `forward(tokens, return_attention=False)` takes `tokens (B, T)` (long, with
# `T <= max_len`) and returns the logits `(B, T, vocab_size)`, or, with
# `return_attention=True`, `(logits, attention)` where `attention` is a list
# with one tensor of weights `(B, num_heads, T, T)` per layer. After a block
# has run, its attention weights are in `block.attn.last_weights`.
#
# Build the blocks by calling `TransformerBlock(...)` inside `__init__` and use
# only their attributes `attn`, `norm1`, `norm2`, `ff` and their `forward`:
# the tests of this exercise put their own correct `TransformerBlock` in place
# of yours (the visible one a stand-in that only runs attention), so that
# exercises 2 and 4 are graded apart.

# %% nbgrader={"grade": false, "grade_id": "TinyGPT", "locked": false, "schema_version": 3, "solution": true}
class TinyGPT(nn.Module):
    """Decoder-only transformer: tokens (B, T) -> logits (B, T, vocab_size) [, list of (B, h, T, T) weights]."""

    def __init__(self, vocab_size, d_model, num_heads, num_layers, max_len):
        super().__init__()
        ### BEGIN SOLUTION
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList([TransformerBlock(d_model, num_heads, 4 * d_model) for _ in range(num_layers)])
        self.final_norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size)
        ### END SOLUTION

    def forward(self, tokens, return_attention=False):
        ### BEGIN SOLUTION
        length = tokens.shape[1]
        positions = torch.arange(length, device=tokens.device)
        x = self.token_embedding(tokens) + self.position_embedding(positions)
        causal = torch.tril(torch.ones(length, length, dtype=torch.bool, device=tokens.device))
        attention = []
        for block in self.blocks:
            x = block(x, causal)
            attention.append(block.attn.last_weights)
        logits = self.lm_head(self.final_norm(x))
        return (logits, attention) if return_attention else logits
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_TinyGPT", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Visible test: shapes of the logits and of every layer's weights, and a worked example of the causal weights.
# TinyGPT is built here with a stand-in for TransformerBlock that only runs attention, so this test checks TinyGPT alone.
class _StandInBlock(nn.Module):
    """Has the parts of a TransformerBlock; forward runs the attention and returns x unchanged."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__()
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.norm1, self.norm2 = (nn.LayerNorm(d_model) for _ in range(2))
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x, mask=None):
        self.attn(x, mask)
        return x


torch.manual_seed(0)
with _transformer_block_is(_StandInBlock):
    _gpt = TinyGPT(vocab_size=11, d_model=16, num_heads=2, num_layers=3, max_len=9)
    _tokens = torch.randint(0, 11, (4, 7))
    expect_shape(_gpt(_tokens), (4, 7, 11), "TinyGPT's logits for tokens (4, 7) and vocab_size 11")
    _result = _gpt(_tokens, return_attention=True)
assert isinstance(_result, tuple) and len(_result) == 2, "with return_attention=True, TinyGPT returns (logits, attention)"
expect_shape(_result[0], (4, 7, 11), "the logits returned with return_attention=True")
assert len(_result[1]) == 3, f"attention must hold one tensor per layer (3 layers), not {len(_result[1])}"
for _layer, _weights in enumerate(_result[1]):
    expect_shape(_weights, (4, 2, 7, 7), f"the attention weights of layer {_layer} (batch, heads, queries, keys)")
    expect_close(torch.as_tensor(_weights).sum(-1), torch.ones(4, 2, 7), f"the sum over keys of layer {_layer}'s weights")

# Worked example: with every query and key projection set to zero, all scores are 0, so under the causal mask
# position t spreads its weight evenly over positions 0..t: row t of every head's weights is 1/(t+1) on keys 0..t
# and 0 after (row 0: 1, 0, 0, ...; row 1: 1/2, 1/2, 0, ...).
_uniform_causal = torch.tril(torch.ones(7, 7)) / torch.arange(1, 8)[:, None]
with torch.no_grad(), _transformer_block_is(_StandInBlock):
    for _attention in [m for m in _gpt.modules() if isinstance(m, MultiHeadSelfAttention)]:
        _attention.qkv.weight.zero_()
        _attention.qkv.bias.zero_()
    _, _zero_score_weights = _gpt(_tokens, return_attention=True)
for _layer, _weights in enumerate(_zero_score_weights):
    expect_close(torch.as_tensor(_weights)[0, 0], _uniform_causal, f"layer {_layer}'s weights (item 0, head 0) when "
                 "every score is 0: row t must be 1/(t+1) on positions 0..t and 0 after them (a causal mask that is "
                 "True where key position <= query position)")

# %% nbgrader={"grade": true, "grade_id": "test_TinyGPT_causal", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: position t sees itself and every earlier token, never a later one (logits and attention).
# With the grader's correct TransformerBlock.
### BEGIN HIDDEN TESTS
class _CorrectBlock(nn.Module):
    """A correct pre-norm (or post-norm) TransformerBlock, the grader's own: TinyGPT is graded with it."""

    def __init__(self, d_model, num_heads, d_ff, norm_first=True):
        super().__init__()
        self.norm_first = norm_first
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self.attn(self.norm1(x), mask)[0]
            return x + self.ff(self.norm2(x))
        x = self.norm1(x + self.attn(x, mask)[0])
        return self.norm2(x + self.ff(x))


def _check_causal():
    torch.manual_seed(3)
    with _transformer_block_is(_CorrectBlock):
        gpt = TinyGPT(vocab_size=13, d_model=16, num_heads=2, num_layers=2, max_len=10).double()
        gpt.eval()
        tokens = torch.randint(0, 13, (3, 10))
        logits, attention = gpt(tokens, return_attention=True)
        changed = tokens.clone()
        changed[:, 6:] = (changed[:, 6:] + 1 + torch.randint(0, 11, (3, 4))) % 13
        logits_changed = gpt(changed)
    for layer, weights in enumerate(attention):
        above = torch.triu(torch.ones(10, 10, dtype=torch.bool), diagonal=1)
        leaked = float(torch.as_tensor(weights).detach()[..., above].abs().max())
        assert leaked == 0, (f"in layer {layer}, some position puts weight {leaked:.3g} on a later position: every block "
                             "needs a causal mask (True where key position <= query position)")
        # Softmax gives every key a query may attend to a positive weight: a zero one is a key the mask hides.
        seen = float(torch.as_tensor(weights).detach()[..., ~above].min())
        assert seen > 0, (f"in layer {layer}, some position puts weight 0 on itself or an earlier position: the causal "
                          "mask is True where key position <= query position, the diagonal included (each position "
                          "sees its own token; torch.tril(..., diagonal=0), not diagonal=-1)")
    expect_close(logits_changed[:, :6], logits[:, :6], "the logits at positions 0-5 after changing the tokens at positions "
                 "6-9 (a causal model must not see later tokens)")


_check_causal()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_TinyGPT_pre_norm", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden test: the blocks are pre-norm (the default): every layer's attention reads layer-normalised input.
# With the grader's correct TransformerBlock, freshly built (LayerNorm's gain 1 and bias 0: mean 0, std 1 per position).
### BEGIN HIDDEN TESTS
def _fresh_tinygpt(vocab_size=13, d_model=16, num_heads=2, num_layers=2, max_len=10):
    """A TinyGPT built with the grader's correct block (float64, evaluation mode) and a batch of tokens."""
    torch.manual_seed(4)
    with _transformer_block_is(_CorrectBlock):
        gpt = TinyGPT(vocab_size=vocab_size, d_model=d_model, num_heads=num_heads, num_layers=num_layers,
                      max_len=max_len).double()
    gpt.eval()
    return gpt, torch.randint(0, vocab_size, (3, max_len))


def _inputs_of(gpt, modules, tokens):
    """Run gpt on tokens with a forward pre-hook on each of `modules`; the first input each one got, in order."""
    seen = {}
    def keep(i, args, kwargs):
        x = args[0] if args else next(iter(kwargs.values()), None)  # called with x positional or by keyword
        if torch.is_tensor(x):
            seen.setdefault(i, x.detach())

    handles = [module.register_forward_pre_hook(lambda module, args, kwargs, i=i: keep(i, args, kwargs), with_kwargs=True)
               for i, module in enumerate(modules)]
    try:
        with torch.no_grad(), _transformer_block_is(_CorrectBlock):
            gpt(tokens)
    finally:
        for handle in handles:
            handle.remove()
    return [seen.get(i) for i in range(len(modules))]


def _normalised(x):
    """Whether every position of x has mean 0 and standard deviation 1 over its features, as LayerNorm gives."""
    mean, std = x.mean(dim=-1), x.std(dim=-1, unbiased=False)
    return bool((mean.abs() < 1e-6).all() and ((std - 1).abs() < 1e-3).all()), float(mean.abs().max()), float(std.mean())


def _check_pre_norm():
    gpt, tokens = _fresh_tinygpt()
    attentions = [m for m in gpt.modules() if isinstance(m, MultiHeadSelfAttention)]
    assert len(attentions) == 2, (f"TinyGPT(num_layers=2) holds {len(attentions)} MultiHeadSelfAttention modules, not 2: "
                                  "build one TransformerBlock(d_model, num_heads, 4 * d_model) per layer")
    inputs = _inputs_of(gpt, attentions, tokens)
    if any(x is None for x in inputs):  # attention computed from its parameters: what its qkv projection reads
        inputs = _inputs_of(gpt, [m.qkv for m in attentions], tokens)
    for layer, x in enumerate(inputs):
        assert x is not None, f"the attention of layer {layer} never ran: call every block in forward"
        normalised, mean, std = _normalised(x)
        assert normalised, (
            f"the attention of layer {layer} reads input that is not layer-normalised (largest mean {mean:.3g}, mean "
            f"standard deviation {std:.3g} per position, where LayerNorm gives 0 and 1): the blocks must be pre-norm, "
            "TransformerBlock(d_model, num_heads, 4 * d_model) with the default norm_first=True, not norm_first=False")


_check_pre_norm()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_TinyGPT_ff_width", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden test: the feed-forward layer of every block is 4 * d_model wide (d_ff = 4 * d_model).
### BEGIN HIDDEN TESTS
def _check_ff_width():
    gpt, _ = _fresh_tinygpt(d_model=16)
    in_attention = {id(p) for m in gpt.modules() if isinstance(m, MultiHeadSelfAttention) for p in m.parameters()}
    widths = [m.out_features for m in gpt.modules() if isinstance(m, nn.Linear) and m.in_features == 16
              and id(m.weight) not in in_attention and m.out_features != 13]
    assert widths == [64, 64], (
        f"the feed-forward layers of TinyGPT(d_model=16, num_layers=2) widen d_model to {widths}, not [64, 64]: each "
        "block is TransformerBlock(d_model, num_heads, 4 * d_model), so d_ff = 4 * d_model (not d_model)")


_check_ff_width()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_TinyGPT_final_norm", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden test: a final LayerNorm comes before the output layer (the output layer reads layer-normalised input).
### BEGIN HIDDEN TESTS
def _check_final_norm():
    gpt, tokens = _fresh_tinygpt(vocab_size=20, d_model=16)
    heads = [m for m in gpt.modules() if isinstance(m, nn.Linear) and m.out_features == 20]
    assert len(heads) == 1 and heads[0].in_features == 16, (
        f"TinyGPT(vocab_size=20, d_model=16) holds {len(heads)} nn.Linear layers with 20 outputs: it needs one output "
        "layer nn.Linear(d_model, vocab_size)")
    # An output layer that copies its input into the first 16 logits shows what it reads, however it is called.
    with torch.no_grad():
        heads[0].weight.zero_()
        heads[0].weight[:16] = torch.eye(16, dtype=heads[0].weight.dtype)
        if heads[0].bias is not None:
            heads[0].bias.zero_()
        with _transformer_block_is(_CorrectBlock):
            logits = gpt(tokens)
    normalised, mean, std = _normalised(torch.as_tensor(logits)[..., :16])
    assert normalised, (
        f"the output layer reads input that is not layer-normalised (largest mean {mean:.3g}, mean standard deviation "
        f"{std:.3g} per position, where LayerNorm gives 0 and 1): apply the final nn.LayerNorm(d_model) to the output "
        "of the last block before the output layer")


_check_final_norm()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "induction_md", "locked": true, "schema_version": 3, "solution": false}
# ### Train it on repeated random sequences
#
# The cell below gives you the task. `repeated_sequences` draws a block of
# `period` distinct random tokens (3 to 14 of the `VOCAB = 24`) and repeats it
# until the sequence has `SEQ_LEN + 1 = 17` tokens, for example
# `7 19 2 7 19 2 7 19 ...` for period 3. The first occurrence of each token is
# unpredictable; every later token is predictable from the context alone: find
# the earlier occurrence of the current token and copy the token that followed
# it. A two-layer transformer can learn this with two heads working together
# (Elhage et al., 2021, who named them; Olsson et al., 2022): a
# *previous-token head* in layer 1 copies into each position which token came
# before it, and an *induction head* in layer 2
# attends from the current token to the position right after its earlier
# occurrence.
#
# `train_induction(model)` trains for 400 steps with AdamW on the loss of the
# predictable tokens (about 2 seconds); `evaluate_induction(model)` measures,
# on 256 fresh sequences with a block of 8 to 14 tokens (so that, in the 16
# tokens the model reads, every repeated token occurs exactly once before), the
# loss and accuracy on the repeated tokens and returns the attention maps. The
# grader does the same with a fixed seed, and expects a loss on the repeated
# tokens below 1.0 and some head that puts on average at least 0.6 of its
# weight on the position right after the earlier occurrence of the current
# token.

# %% nbgrader={"grade": false, "grade_id": "induction_setup", "locked": true, "schema_version": 3, "solution": false}
VOCAB, SEQ_LEN = 24, 16
MIN_PERIOD, MAX_PERIOD = 3, 14


def repeated_sequences(batch_size, generator, min_period=MIN_PERIOD, max_period=MAX_PERIOD):
    """Blocks of `period` distinct random tokens repeated to SEQ_LEN + 1 tokens.

    Returns (tokens (B, SEQ_LEN + 1) long, repeated (B, SEQ_LEN + 1) bool: True where the token occurred earlier).
    """
    period = torch.randint(min_period, max_period + 1, (batch_size, 1), generator=generator)
    blocks = torch.argsort(torch.rand(batch_size, VOCAB, generator=generator), dim=-1)  # distinct tokens per row
    positions = torch.arange(SEQ_LEN + 1)[None]
    return torch.gather(blocks, 1, positions % period), positions >= period


def train_induction(model, steps=400, batch_size=32, lr=1e-2, seed=0):
    """Train `model` (tokens (B, T) -> logits) to predict the repeated tokens; returns the loss of every step.

    AdamW with gradient clipping; the loss is the cross-entropy of the predictable (repeated) next tokens only.
    """
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model.train()
    losses = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a model this small trains fastest on one thread
    try:
        for _ in range(steps):
            tokens, repeated = repeated_sequences(batch_size, generator)
            logits = model(tokens[:, :-1])
            predictable = repeated[:, 1:]  # the target of position t is token t + 1
            loss = F.cross_entropy(logits[predictable], tokens[:, 1:][predictable])
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            losses.append(loss.item())
    finally:
        torch.set_num_threads(threads)
    return losses


@torch.no_grad()
def evaluate_induction(model, n=256, seed=1):
    """Loss and accuracy on repeated tokens, attention, tokens, on n fresh sequences of period 8 to 14.

    Each sequence holds its block once, then the block's start again, up to SEQ_LEN tokens.

    `attention` is the model's list of (n, heads, SEQ_LEN, SEQ_LEN) weights, `tokens` the (n, SEQ_LEN) input.
    """
    model.eval()
    generator = torch.Generator().manual_seed(seed)
    tokens, repeated = repeated_sequences(n, generator, min_period=SEQ_LEN // 2, max_period=SEQ_LEN - 2)
    logits, attention = model(tokens[:, :-1], return_attention=True)
    predictable = repeated[:, 1:]
    loss = F.cross_entropy(logits[predictable], tokens[:, 1:][predictable]).item()
    accuracy = (logits.argmax(-1) == tokens[:, 1:])[predictable].float().mean().item()
    model.train()
    return loss, accuracy, attention, tokens[:, :-1]


# %% nbgrader={"grade": false, "grade_id": "training_run", "locked": true, "schema_version": 3, "solution": false}
# Train your TinyGPT (with your TransformerBlock) for about 2 seconds, as the grader does with its own block.
torch.manual_seed(0)
induction_model = TinyGPT(VOCAB, d_model=32, num_heads=2, num_layers=2, max_len=SEQ_LEN)
induction_losses = train_induction(induction_model)
induction_loss, induction_accuracy, induction_attention, induction_tokens = evaluate_induction(induction_model)
print(f"training loss {induction_losses[0]:.2f} -> {induction_losses[-1]:.3f}; on fresh sequences: "
      f"loss {induction_loss:.3f}, accuracy {induction_accuracy:.3f}")
try:  # your exercise 3 finds the heads
    induction_scores = torch.as_tensor(find_induction_heads(induction_attention, induction_tokens))
    print("induction score of each head (one row per layer):", np.round(induction_scores.tolist(), 2).tolist())
except Exception as error:
    print(f"find_induction_heads did not run: {error!r}")

# %% nbgrader={"grade": true, "grade_id": "test_TinyGPT_loss", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden test: trained (seed 0), TinyGPT's loss on the repeated tokens of fresh sequences is below 1.0.
# Trained with correct blocks: your TransformerBlock where it computes what the grader's does, else the grader's. The
# first occurrence of a token cannot be predicted; the repeats can.
### BEGIN HIDDEN TESTS
def _notebooks_block_is_correct():
    """Whether the notebook's TransformerBlock computes what _CorrectBlock computes, outputs, gradients (for the
    input and every parameter) and the weights its attn keeps, given the same parameters, at TinyGPT's sizes with
    a causal mask: then TinyGPT
    trains with the notebook's own blocks (the same computation, in the student's kernel alone); else with
    _CorrectBlock, so that a mistake in the block costs its points once, in exercise 2. Cached."""
    found = globals().setdefault("_tinygpt_block_checked", [])
    if not found:
        try:
            draws = torch.Generator().manual_seed(7)
            torch.manual_seed(7)
            correct = _CorrectBlock(32, 2, 128)
            block = TransformerBlock(32, 2, 128)
            block.load_state_dict(dict(correct.state_dict()))  # (a plain dict: data, not a handle, to the kernel)
            x = torch.randn(2, SEQ_LEN - 1, 32, generator=draws)
            causal = torch.tril(torch.ones(SEQ_LEN - 1, SEQ_LEN - 1, dtype=torch.bool))
            want, [want_dx], want_dp = gradients_of(correct, (x, causal), wrt=(0,), pick=None)
            got, [got_dx], got_dp = gradients_of(block, (x, causal), wrt=(0,), pick=None)
            # (TinyGPT reports each block's attn.last_weights: the block must compute them with its attn.)
            pairs = [(got, want), (got_dx, want_dx), (block.attn.last_weights, correct.attn.last_weights)]
            pairs += [(got_dp.get(name), g) for name, g in want_dp.items()]
            found.append(set(got_dp) == set(want_dp) and all(
                a is not None and torch.allclose(torch.as_tensor(a), torch.as_tensor(b), atol=1e-5, rtol=1e-4)
                for a, b in pairs))
        except Exception:  # (any failure: the grader's block, as before)
            found.append(False)
    return found[0]


def _train_tinygpt_with_correct_blocks(seed=0):
    """Train a TinyGPT built with correct blocks as train_induction does (the notebook's own where
    _notebooks_block_is_correct(), its parameters started as with _CorrectBlock; else _CorrectBlock); cached:
    (loss, accuracy, attention, tokens)."""
    cache = globals().setdefault("_tinygpt_training_results", {})
    if seed not in cache:
        try:
            torch.manual_seed(seed)
            with _transformer_block_is(_CorrectBlock):
                start = TinyGPT(VOCAB, d_model=32, num_heads=2, num_layers=2, max_len=SEQ_LEN)
            own = None
            if _notebooks_block_is_correct():
                own = TinyGPT(VOCAB, d_model=32, num_heads=2, num_layers=2, max_len=SEQ_LEN)
                try:
                    own.load_state_dict(start.state_dict())  # (the calibrated start: the same parameters)
                except Exception:  # (a TinyGPT whose parameters do not carry over: the grader's blocks)
                    own = None
            if own is None:
                with _transformer_block_is(_CorrectBlock):
                    train_induction(start, seed=seed)
                    cache[seed] = evaluate_induction(start)
            else:
                train_induction(own, seed=seed)
                cache[seed] = evaluate_induction(own)
        except Exception as error:  # the same failure for both training tests
            cache[seed] = error
    if isinstance(cache[seed], Exception):
        raise cache[seed]
    return cache[seed]


_loss, _accuracy, _, _ = _train_tinygpt_with_correct_blocks()
assert _loss < 1.0, (
    f"after training, TinyGPT's loss on the repeated tokens of fresh sequences is {_loss:.2f} (accuracy "
    f"{_accuracy:.0%}); below 1.0 is expected (the reference gets at most 0.4 on 30 seeds). Check the position "
    "embedding (the previous-token head needs it), the causal mask and the output layer.")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_TinyGPT_induction", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden test: after the same training, some head is an induction head (score at least 0.6).
# It puts on average at least 0.6 of its weight on the position right after the earlier occurrence of the current token.
### BEGIN HIDDEN TESTS
def _check_induction():
    _, _, attention, tokens = _train_tinygpt_with_correct_blocks()
    expected = (tokens.shape[0], 2, SEQ_LEN, SEQ_LEN)
    shapes = [tuple(torch.as_tensor(w).shape) for w in attention]
    assert shapes == [expected, expected], (
        f"TinyGPT(num_layers=2, num_heads=2) returned attention weights of shapes {shapes}: each layer must return its "
        f"own weights (B, heads, T, T) = {expected}, in layer order")
    scores = np.asarray(_induction_scores(attention, tokens), dtype=float)  # float64: rounds to what it shows
    if scores.max() >= 0.6:
        return
    later = torch.triu(torch.ones(SEQ_LEN, SEQ_LEN, dtype=torch.bool), diagonal=1)
    leaked = max(float(torch.as_tensor(w).detach()[..., later].abs().max()) for w in attention)
    # The likely mistake first: the tables keep only the start of a message.
    hint = (f"your TinyGPT lets positions see later tokens (weight up to {leaked:.2g}), so it need not copy from "
            "earlier: give every block the causal mask (True where key position <= query position)." if leaked > 0 else
            "check the position embedding (the previous-token head in layer 1 needs it to find the token before).")
    raise AssertionError(
        f"after training, no head is an induction head (best score {scores.max():.2f}, at least 0.6 expected): {hint} "
        "The score of a head is the mean weight it puts on the position right after the earlier occurrence of the "
        f"current token; per layer and head: {np.round(scores, 2).tolist()}.")


_check_induction()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "look_md", "locked": true, "schema_version": 3, "solution": false}
# Optional: look at your model's heads. The training cell above left the
# attention of 256 fresh sequences in `induction_attention` and their tokens
# in `induction_tokens`. A previous-token head shows a bright diagonal just below the
# main one; an induction head lights up the position after the earlier copy.
#
# ```python
# import matplotlib.pyplot as plt
# print(find_induction_heads(induction_attention, induction_tokens))
# fig, axes = plt.subplots(2, 2, figsize=(8, 8))
# for layer in range(2):
#     for head in range(2):
#         axes[layer, head].imshow(induction_attention[layer][0, head], cmap="cividis", vmin=0, vmax=1)
#         axes[layer, head].set(title=f"layer {layer + 1}, head {head}", xlabel="key", ylabel="query")
# ```

# %% [markdown] nbgrader={"grade": false, "grade_id": "crossover_md", "locked": true, "schema_version": 3, "solution": false}
# ## 5. Where attention's $n^2$ cost overtakes the feed-forward layer (2 points)
#
# In a block with `d_model = 64`, 4 heads and `d_ff = 256`, two products grow
# with the square of the sequence length $n$: the scores $QK^\top$ and the
# weighted sum of the values (weights times $V$), over all heads. The
# feed-forward layer's two linear maps grow only linearly in $n$. Measure both
# with `count_flops` (given above) for $n$ = 16, 32, 64, 128, 256, 512, 1024,
# on random tensors: queries, keys and values of shape `(1, 4, n, 16)`, and
# `x` of shape `(1, n, 64)` through
# `nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64))`.
# Write the two products out with `@` (`count_flops` does not see inside
# `F.scaled_dot_product_attention` on the CPU), and print what you measure.
#
# Keep what you measure: set `attention_flops` to the operations the two
# $n^2$ products take together and `feed_forward_flops` to those of the
# feed-forward layer, one count per $n$ in the order of the list (lists or
# arrays of 7 numbers). Then set `crossover_length` to the smallest $n$ of the
# list at which the two $n^2$ products cost at least as many operations as the
# feed-forward layer. At one $n$ of the list the two counts are exactly equal:
# "at least as many" includes that $n$. The tests check your counts against
# `count_flops` and your `crossover_length` against your counts.

# %% nbgrader={"grade": false, "grade_id": "crossover_length", "locked": false, "schema_version": 3, "solution": true}
### BEGIN SOLUTION
feed_forward = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64))
attention_flops, feed_forward_flops = [], []
crossover_length = None
for n in [16, 32, 64, 128, 256, 512, 1024]:
    q, k, v = torch.randn(3, 1, 4, n, 16)
    x = torch.randn(1, n, 64)
    mixing = count_flops(lambda: torch.softmax(q @ k.transpose(-2, -1) / 4.0, dim=-1) @ v)
    position_wise = count_flops(lambda: feed_forward(x))
    attention_flops.append(mixing)
    feed_forward_flops.append(position_wise)
    print(f"n = {n:4d}: scores and weighted sum {mixing:>11,} flops, feed-forward {position_wise:>11,} flops")
    if crossover_length is None and mixing >= position_wise:
        crossover_length = n
### END SOLUTION

# %% nbgrader={"grade": true, "grade_id": "test_crossover_length", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Visible test: one count per length in attention_flops and feed_forward_flops, and crossover_length one of the lengths.
for _name in ("attention_flops", "feed_forward_flops"):
    if _name not in globals():  # (not done yet: an error, as for any name the answer cell has not defined)
        raise NameError(f"{_name} is not defined: keep the count you measured at every n of the list in it")
    expect_shape(np.asarray(globals()[_name], dtype=float), (7,), f"{_name} (one count for each n = 16, 32, ..., 1024)")
assert crossover_length is not None, "crossover_length is None: at some n of the list the n^2 products cost more"
assert float(crossover_length) in (16, 32, 64, 128, 256, 512, 1024), (
    f"crossover_length must be one of 16, 32, 64, 128, 256, 512, 1024, not {float(crossover_length):.6g}")

# %% nbgrader={"grade": true, "grade_id": "test_crossover_length_counts", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden test: the counts are what count_flops gives for the two n^2 products and for the feed-forward layer.
### BEGIN HIDDEN TESTS
_lengths = (16, 32, 64, 128, 256, 512, 1024)


def _true_counts():
    """count_flops of the scores QK^T and the weighted sum (4 heads, 16 features) and of the feed-forward layer."""
    torch.manual_seed(0)
    layer = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64))
    mixing, position_wise = [], []
    for n in _lengths:
        q, k, v = torch.randn(3, 1, 4, n, 16)
        x = torch.randn(1, n, 64)
        mixing.append(count_flops(lambda: torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v))
        position_wise.append(count_flops(lambda: layer(x)))
    return np.array(mixing, dtype=float), np.array(position_wise, dtype=float)


def _your_counts():
    """Your attention_flops and feed_forward_flops as float arrays, or None where one is missing or not 7 numbers."""
    try:
        counts = [np.asarray(globals()[name], dtype=float) for name in ("attention_flops", "feed_forward_flops")]
    except Exception:
        return None
    return counts if all(c.shape == (7,) and np.isfinite(c).all() for c in counts) else None


def _check_counts():
    for name in ("attention_flops", "feed_forward_flops"):
        if name not in globals():
            raise NameError(f"{name} is not defined: keep the count you measured at every n of the list in it")
    mixing, position_wise = _true_counts()
    counts = _your_counts()
    assert counts is not None, (
        "attention_flops and feed_forward_flops must each hold the 7 counts you measured, one for each n = 16, 32, "
        "..., 1024")
    yours_mixing, yours_position_wise = counts
    for i, n in enumerate(_lengths):
        got, expected = yours_mixing[i], mixing[i]
        if not np.isclose(got, expected, rtol=1e-6):
            projections = 4 * 2 * n * 64 * 64
            hint = {0.0: "count_flops counts 0 inside F.scaled_dot_product_attention on the CPU: write the products "
                         "with @",
                    expected / 2: "that is ONE of the two products: count both, the scores QK^T and the weighted sum "
                                  "of the values",
                    expected + projections: "that includes the four d_model x d_model projections: count only the "
                                            "two n^2 products"}.get(got, "count the two products QK^T and weights @ V "
                                                                         "over the 4 heads")
            raise AssertionError(f"attention_flops at n = {n} is {got:,.0f}, but count_flops gives {expected:,.0f} for "
                                 f"the scores QK^T and the weighted sum of the values together; {hint}")
        got, expected = yours_position_wise[i], position_wise[i]
        assert np.isclose(got, expected, rtol=1e-6), (
            f"feed_forward_flops at n = {n} is {got:,.0f}, but count_flops gives {expected:,.0f} for x (1, n, 64) "
            "through nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64))")


_check_counts()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_crossover_length_value", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden test: crossover_length is the smallest length at which your attention count reaches your feed-forward count.
# Read off your own counts (a miscount costs its points in the test above only).
### BEGIN HIDDEN TESTS
# The true counts tie at n = 256 (256 n^2 = 4 n d_model d_ff when n = d_ff): "at least as many" counts that n.
def _check_crossover_value():
    counts = _your_counts()
    assert counts is not None, (
        f"crossover_length is {crossover_length!r:.12}, but it must be read off your measurement, and attention_flops and "
        "feed_forward_flops do not hold the 7 counts you measured (one for each n = 16, 32, ..., 1024)")
    try:
        answer = float(crossover_length)
    except (TypeError, ValueError):
        raise AssertionError(f"crossover_length must be one of the lengths measured, not {crossover_length!r}") from None
    crossing = [n for n, a, f in zip(_lengths, *counts) if a >= f]
    if not crossing:  # your counts never cross (a miscount, graded above): the true crossover then
        crossing = [n for n, a, f in zip(_lengths, *_true_counts()) if a >= f]
    hints = {crossing[0] * 2: f"at n = {crossing[0]} the n^2 products cost at least as many operations (equal counts "
                              "count: 'at least as many')",
             1024: "crossover_length is the SMALLEST n at which the n^2 products cost at least as much"}
    assert answer == crossing[0], (
        f"crossover_length is {answer:.6g}, but your counts show the two n^2 products reaching the feed-forward "
        f"layer first at n = {crossing[0]}; {hints.get(answer, 'compare the counts you printed')}")


_check_crossover_value()
### END HIDDEN TESTS
