# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false}
# # Exercise 8: cheaper attention
#
# A transformer that generates text keeps the keys and values of every token
# it has seen, in every layer: the *KV cache*. Its memory, not the arithmetic,
# bounds how long a context and how large a batch a model can serve. In this
# notebook you build the ways of making it smaller that today's models use:
# keys and values shared by groups of query heads (grouped-query attention,
# Ainslie et al., 2023; multi-query attention, Shazeer, 2019), keys and values
# rebuilt from one small latent per token (multi-head latent attention,
# DeepSeek-AI, 2024), a window of recent tokens plus a few *attention sinks*
# (Beltagy et al., 2020; Xiao et al., 2024), and linear attention, whose whole
# cache is one fixed-size state per head (Katharopoulos et al., 2020).
#
# | # | you build | points |
# |---|---|---|
# | 1 | `GroupedQueryAttention(d_model, n_heads, n_kv_heads, bias=False)`, with a KV cache | 5 |
# | 2 | `kv_cache_bytes(kind, T, n_layers, d_model, n_heads, dtype_bytes, **kw)` | 2 |
# | 3 | `LatentAttention(d_model, n_heads, d_latent, bias=False)`, naive and absorbed | 5 |
# | 4 | `window_mask(n, window, sinks=0)` and `SlidingWindowCache(window, sinks=0)` | 4 |
# | 5 | `linear_attention(q, k, v, causal=True, chunk_size=None)` and `recurrent_linear_attention(q, k, v, state=None)` | 5 |
# | | **total** | **21** |
#
# **How to work.** Replace every `raise NotImplementedError()` with your code.
# Keep the names, arguments and attribute names: the grader calls them and
# copies its own weights into your modules' `nn.Linear` layers. Do not edit or
# delete test cells; the grader restores its own copy of each. The notebook
# gives you `apply_rope` (chapter 5's rotary embedding): use it, but do not
# define anything else under that name. The names `expect_shape`,
# `expect_close`, `largest_operation_of` and `held_by` belong to the tests: do
# not define your own with these names.
#
# **How it is graded.** The visible tests after each exercise check shapes and
# one worked example: a small input whose right answer the test states and
# computes on its own. Run them. Grading adds hidden tests to the cells marked
# *hidden tests*, which compare your answers with the tests' own computation
# on random inputs and weights, in float64 and float32, on shapes where no two
# axes have the same length: `GroupedQueryAttention` with as many key-value
# heads as query heads against `nn.MultiheadAttention`; decoding with your
# cache, one token and several at a time, against one call on the whole
# sequence; absorbed against naive latent attention, biases included; the
# window cache against the window mask with RoPE at absolute positions; the
# parallel, chunked and recurrent forms of linear attention against each
# other, with chunk sizes that do and do not divide the length. Three bounds
# are tested, and exercises 3, 4 and 5 state them with their numbers: a
# decode step of absorbed latent attention forms no tensor of all `T`
# tokens' keys or values, the window cache holds no more than `window +
# sinks` tokens' keys and values, and the chunked and recurrent forms of
# linear attention never form the `n × n` matrix. A test cell earns its points
# when it runs without an error; warnings cost nothing. No test of one
# exercise calls your answer to another, so a mistake costs its points once.
#
# **Tolerances.** What is graded is the value you return, at the precision of
# its dtype (`expect_close` below): a float64 answer within `1e-10` absolute or
# `1e-8` relative, a float32 one within `1e-5` absolute or `1e-4` relative.
# Compute float64 inputs in float64 and return the dtype you were given.
#
# **Conventions.** PyTorch throughout. `nn.Linear` computes `y = x Wᵀ + b`,
# with its `weight` of shape `(out_features, in_features)`. A mask is boolean
# and **`True` means "may attend"**. Every attention in this notebook is
# causal: token `i` sees tokens `j ≤ i`.
#
# The book refers to exercise N of this notebook as exercise 8.N. The whole
# notebook runs in about ten seconds on one CPU core.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

# The tensors of this notebook are small: one thread computes them fastest (more threads mostly wait for each other).
torch.set_num_threads(1)


def expect_shape(actual, shape, what):
    """Fail with a readable message unless `actual` has shape `shape`."""
    actual = tuple(np.shape(actual))
    assert actual == tuple(shape), f"{what} should have shape {tuple(shape)}, but it has shape {actual}."


def expect_close(actual, expected, what):
    """Fail with a readable message unless `actual` (a tensor) matches `expected` entry by entry.

    The tolerance follows the dtype of `actual`: absolute 1e-5 and relative 1e-4 for float32 (or narrower),
    absolute 1e-10 and relative 1e-8 otherwise.
    """
    dtype = actual.dtype if torch.is_tensor(actual) or isinstance(actual, np.ndarray) else None
    low_precision = dtype in (torch.float32, torch.float16, torch.bfloat16, np.float32, np.float16)
    atol, rtol = (1e-5, 1e-4) if low_precision else (1e-10, 1e-8)
    actual = np.asarray(actual.detach() if torch.is_tensor(actual) else actual, dtype=float)
    expected = np.asarray(expected.detach() if torch.is_tensor(expected) else expected, dtype=float)
    expect_shape(actual, expected.shape, what)
    nan = np.isnan(actual) & ~np.isnan(expected)
    if nan.any():
        idx = tuple(int(i) for i in np.argwhere(nan)[0])
        raise AssertionError(f"{what} contains NaN (not a number), first at index {idx}; expected {expected[idx]:.6g}. "
                             "NaN usually comes from 0 / 0 or inf - inf.")
    bad = ~np.isclose(actual, expected, atol=atol, rtol=rtol, equal_nan=True)
    if bad.any():
        with np.errstate(invalid="ignore"):
            difference = np.where(bad, np.nan_to_num(np.abs(actual - expected), nan=np.inf), -1.0)
        idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(difference)), difference.shape))
        raise AssertionError(f"{what} is wrong: the largest difference is {difference[idx]:.3g}, at index {idx} "
                             f"(expected {expected[idx]:.10g}, got {actual[idx]:.10g}); {int(bad.sum())} of "
                             f"{bad.size} entries differ by more than the tolerance.")


def largest_operation_of(function, args, wrt=(), kwargs=None):
    """The largest tensor any PyTorch operation outputs while `function(*args, **kwargs)` runs (and its backward
    pass, for the gradients of the sum of its first output with respect to `args[i]`, i in `wrt`): (its number of
    elements, the operation's name). How the tests see what a decode step of exercise 3 computes: a
    TorchDispatchMode sees every operation PyTorch dispatches (torch.utils._python_dispatch is a private module of
    PyTorch's)."""
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


def held_by(obj):
    """What `obj` holds: every tensor and array reachable from it through attributes, lists, tuples, dicts, sets and
    deques, each object once (functions, classes and modules are not walked). [(path, dtype, shape, elements,
    floating)], a Python float as one floating element; views of one storage count the elements they cover once
    (each entry counts what no earlier view covered). How the tests see what exercise 4's cache keeps."""
    import types
    from collections import deque

    skipped = (str, bytes, int, type(None), type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
               types.MethodType)
    found, seen, views, stack = [], set(), {}, [("", obj)]
    while stack:
        path, value = stack.pop()
        if id(value) in seen or isinstance(value, skipped):
            continue
        seen.add(id(value))
        if torch.is_tensor(value):
            new = value.numel()
            if 0 < new <= 1_000_000:  # the storage offsets this view covers, less those an earlier view covered
                offsets = torch.tensor(value.storage_offset())
                for size, stride in zip(value.shape, value.stride()):
                    offsets = offsets.unsqueeze(-1) + torch.arange(size) * stride
                covered = views.setdefault((value.untyped_storage().data_ptr(), str(value.dtype)), set())
                fresh = set(offsets.flatten().tolist()) - covered
                covered |= fresh
                new = len(fresh)
            if new:
                found.append([path, str(value.dtype), list(value.shape), new,
                              value.is_floating_point() or value.is_complex()])
        elif isinstance(value, np.ndarray):
            found.append([path, str(value.dtype), list(value.shape), value.size, value.dtype.kind in "fc"])
        elif isinstance(value, (float, complex, np.floating, np.complexfloating)):
            found.append([path, type(value).__name__, [], 1, True])
        elif isinstance(value, dict):
            stack += [(f"{path}[{key!r}]", item) for key, item in value.items()] + [(path, key) for key in value]
        elif isinstance(value, (list, tuple, deque, set, frozenset)):
            stack += [(f"{path}[{i}]", item) for i, item in enumerate(value)]
        else:
            slots = [klass.__dict__.get("__slots__", ()) for klass in type(value).__mro__]
            names = [name for s in slots for name in ((s,) if isinstance(s, str) else s)]
            attributes = {**{name: getattr(value, name) for name in names
                             if name not in ("__dict__", "__weakref__") and hasattr(value, name)},
                          **getattr(value, "__dict__", {})}
            stack += [(f"{path}.{name}", item) for name, item in attributes.items()]
    return found


def _attend(q, k, v, allowed=None):
    """The tests' own attention: softmax(q kᵀ / sqrt(d), where allowed) v, q (..., m, d), k (..., n, d), v (..., n, e)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if allowed is not None:
        scores = scores.masked_fill(~allowed, -math.inf)
    return torch.softmax(scores, dim=-1) @ v


def _causal(t, T):
    """The tests' own causal mask for t new queries after T - t cached keys: query i sees key j <= T - t + i."""
    return torch.arange(T)[None, :] <= torch.arange(t)[:, None] + (T - t)


# %% [markdown] nbgrader={"grade": false, "grade_id": "gqa_md", "locked": true, "schema_version": 3, "solution": false}
# ## 1. Grouped-query attention with a KV cache (5 points)
#
# When a model generates, each new token's query must meet the keys and
# values of every earlier token. Recomputing them at every step would cost
# the whole sequence again, so a decoder keeps them: the **KV cache**. Its size
# grows with the number of key-value heads, and grouped-query attention shares
# each key-value head between `group = n_heads / n_kv_heads` query heads.
#
# Write `GroupedQueryAttention(d_model, n_heads, n_kv_heads, bias=False)`, an
# `nn.Module` with `d_head = d_model / n_heads` and these layers (all with
# `bias=bias`):
#
# - `self.q = nn.Linear(d_model, d_model)`: query head `h` is features
#   `h·d_head … (h+1)·d_head − 1` of its output;
# - `self.k` and `self.v = nn.Linear(d_model, n_kv_heads · d_head)`:
#   key-value head `g` is features `g·d_head … (g+1)·d_head − 1`;
# - `self.out`, an `nn.Linear(d_model, d_model)` applied to the heads' outputs
#   concatenated in head order.
#
# **Query head `h` reads key-value head `h // group`**: heads 0 to
# `group − 1` share key-value head 0, and so on (with `n_heads = 8` and
# `n_kv_heads = 2`, query head 3 reads key-value head 0 and head 5 reads head
# 1). The scale is `1/√d_head`. With `n_kv_heads = n_heads` this is ordinary
# multi-head attention (it must equal `nn.MultiheadAttention` with the same
# weights and a causal mask); with `n_kv_heads = 1` it is multi-query
# attention.
#
# `forward(x, cache=None)` takes `x (B, t, d_model)`, the `t` new tokens, and
# returns `(y, cache)`: `y (B, t, d_model)` and the new cache, the tuple
# `(K, V)` with `K` and `V` each of shape `(B, n_kv_heads, T, d_head)`: the
# keys and values of **every token so far** (the old cache's `T − t` tokens
# followed by the `t` new ones), **one per key-value head, not repeated** per
# query head. With `cache=None` there are no earlier tokens (`T = t`).
#
# **Causal, with a cache.** New query `i` (0-based among the `t` new ones) is
# token `T − t + i` of the sequence and sees keys `j ≤ T − t + i`. So decoding
# with the cache, one token or several at a time, gives exactly the outputs of
# one call on the whole sequence. Keep the dtype of `x` (float64 stays
# float64).
#
# Graded: the worked example below (1 point); equality with
# `nn.MultiheadAttention` when `n_kv_heads = n_heads` (1); the groups, for
# `n_kv_heads` between 1 and `n_heads` (1); decoding with the cache against one
# call (1.5); the cache's shape, dtype and contents (0.5).

# %% nbgrader={"grade": false, "grade_id": "GroupedQueryAttention", "locked": false, "schema_version": 3, "solution": true}
class GroupedQueryAttention(nn.Module):
    """Causal grouped-query attention: x (B, t, d_model), cache (K, V) or None -> (y (B, t, d_model), (K, V))."""

    def __init__(self, d_model, n_heads, n_kv_heads, bias=False):
        super().__init__()
        ### BEGIN SOLUTION
        if d_model % n_heads or n_heads % n_kv_heads:
            raise ValueError(f"n_heads={n_heads} must divide d_model={d_model}, and n_kv_heads={n_kv_heads} n_heads")
        self.n_heads, self.n_kv_heads, self.d_head = n_heads, n_kv_heads, d_model // n_heads
        self.q = nn.Linear(d_model, d_model, bias=bias)
        self.k = nn.Linear(d_model, n_kv_heads * self.d_head, bias=bias)
        self.v = nn.Linear(d_model, n_kv_heads * self.d_head, bias=bias)
        self.out = nn.Linear(d_model, d_model, bias=bias)
        ### END SOLUTION

    def forward(self, x, cache=None):
        ### BEGIN SOLUTION
        B, t, d_model = x.shape
        group = self.n_heads // self.n_kv_heads
        q = self.q(x).view(B, t, self.n_heads, self.d_head).transpose(1, 2)  # (B, H, t, d_head)
        k, v = (layer(x).view(B, t, self.n_kv_heads, self.d_head).transpose(1, 2) for layer in (self.k, self.v))
        if cache is not None:
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)  # (B, n_kv, T, d_head)
        T = k.shape[2]
        # Consecutive query heads form a group: (B, n_kv, group, t, d_head) meets its kv head (B, n_kv, 1, T, d_head).
        q = q.reshape(B, self.n_kv_heads, group, t, self.d_head)
        scores = q @ k[:, :, None].transpose(-2, -1) / math.sqrt(self.d_head)  # (B, n_kv, group, t, T)
        allowed = torch.arange(T, device=x.device) <= torch.arange(t, device=x.device)[:, None] + (T - t)
        weights = torch.softmax(scores.masked_fill(~allowed, -math.inf), dim=-1)
        heads = (weights @ v[:, :, None]).reshape(B, self.n_heads, t, self.d_head)
        return self.out(heads.transpose(1, 2).reshape(B, t, d_model)), (k, v)
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_GroupedQueryAttention", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: the layers' shapes, the output's and cache's shapes, and a worked example of which kv head each query
# head reads. n_heads = 4, n_kv_heads = 2 (group 2), d_head = 2: q and k are zero (every allowed key weighs the
# same), v gives kv head 0 the constant value (1, 1) and kv head 1 the value (2, 2) (its bias), out is the identity.
# So the output is the value each query head reads: heads 0, 1 read kv head 0 and heads 2, 3 read kv head 1.
torch.manual_seed(0)
_gqa = GroupedQueryAttention(12, 4, 2)
for _name, _shape in [("q", (12, 12)), ("k", (6, 12)), ("v", (6, 12)), ("out", (12, 12))]:
    assert isinstance(getattr(_gqa, _name, None), nn.Linear), f"GroupedQueryAttention needs self.{_name}, an nn.Linear"
    expect_shape(getattr(_gqa, _name).weight, _shape, f"{_name}.weight for d_model=12, n_heads=4, n_kv_heads=2")
    assert getattr(_gqa, _name).bias is None, f"with bias=False (the default), {_name} has no bias"
_y, _cache = _gqa(torch.randn(7, 5, 12))
expect_shape(_y, (7, 5, 12), "the output for x (7, 5, 12)")
assert isinstance(_cache, tuple) and len(_cache) == 2, "the cache is the tuple (K, V)"
expect_shape(_cache[0], (7, 2, 5, 3), "the cached K (B, n_kv_heads, T, d_head): one per kv head, not repeated")
expect_shape(_cache[1], (7, 2, 5, 3), "the cached V (B, n_kv_heads, T, d_head)")

_gqa = GroupedQueryAttention(8, 4, 2, bias=True).double()
with torch.no_grad():
    for _layer in (_gqa.q, _gqa.k, _gqa.v, _gqa.out):
        _layer.weight.zero_()
        _layer.bias.zero_()
    _gqa.v.bias.copy_(torch.tensor([1.0, 1.0, 2.0, 2.0]))
    _gqa.out.weight.copy_(torch.eye(8))
    _y, _ = _gqa(torch.randn(1, 3, 8, dtype=torch.float64))
_read = [round(float(_y[0, -1, 2 * _h])) for _h in range(4)]  # the value query head h read, at the last token
for _h in range(4):
    assert _read[_h] == 1 + _h // 2, (
        f"query head {_h} should read key-value head {_h // 2} ({_h} // group, group = n_heads / n_kv_heads = 2), but "
        f"it reads head {_read[_h] - 1}" + (f" = {_h} % 2? Consecutive query heads share a kv head: repeat each kv "
                                            "head (repeat_interleave), do not tile them" if _read[_h] - 1 == _h % 2 else "")
        + f" (the kv heads read by query heads 0 to 3: {[r - 1 for r in _read]})")
expect_close(_y[0], torch.tensor([[1.0] * 4 + [2.0] * 4] * 3, dtype=torch.float64),
             "the output of the worked example (heads 0, 1 read (1, 1), heads 2, 3 read (2, 2), out the identity)")

# %% nbgrader={"grade": true, "grade_id": "test_GroupedQueryAttention_torch", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: with n_kv_heads = n_heads, equal to nn.MultiheadAttention with the same weights and a causal mask.
### BEGIN HIDDEN TESTS
def _randomise(module, seed, scale=0.4):
    """Give the student's module the tests' own random parameters (every one it has); return them as {name: tensor}."""
    generator = torch.Generator().manual_seed(seed)
    parameters = dict(module.named_parameters())
    with torch.no_grad():
        for name in sorted(parameters):
            value = torch.randn(tuple(parameters[name].shape), dtype=torch.float64, generator=generator) * scale
            parameters[name].copy_(value)
    return {name: p.detach().clone() for name, p in module.named_parameters()}


def _inputs(seed, *shape, dtype=torch.float64):
    """The tests' own random inputs of `shape`: drawn from a generator of their own, whatever the student's code drew."""
    return torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed)).to(dtype)


def _expect_answer(got, dtype, expected, what, why):
    """The answer `got` keeps `dtype` and equals `expected` (at its dtype's tolerance)."""
    assert got.dtype == dtype, f"{what} returns {got.dtype}: keep the dtype you are given"
    expect_close(got, expected, f"the output of {what}, {why}")


def _check_gqa_torch():
    for B, t, d_model, heads, bias, dtype in [(2, 5, 12, 3, True, torch.float64), (3, 7, 20, 4, False, torch.float64),
                                              (2, 6, 15, 5, True, torch.float32)]:
        torch.manual_seed(B * t)
        mine = GroupedQueryAttention(d_model, heads, heads, bias=bias).to(dtype)
        p = _randomise(mine, d_model + t)
        theirs = nn.MultiheadAttention(d_model, heads, bias=bias, batch_first=True).to(dtype)
        with torch.no_grad():
            theirs.in_proj_weight.copy_(torch.cat([p["q.weight"], p["k.weight"], p["v.weight"]]))
            theirs.out_proj.weight.copy_(p["out.weight"])
            if bias:
                theirs.in_proj_bias.copy_(torch.cat([p["q.bias"], p["k.bias"], p["v.bias"]]))
                theirs.out_proj.bias.copy_(p["out.bias"])
        x = _inputs(B * t, B, t, d_model, dtype=dtype)
        with torch.no_grad():
            y, _ = mine(x)
            expected, _ = theirs(x, x, x, attn_mask=~_causal(t, t), need_weights=False)
        what = (f"GroupedQueryAttention(d_model={d_model}, n_heads={heads}, n_kv_heads={heads}, bias={bias}) on x "
                f"{tuple(x.shape)} {dtype}")
        _expect_answer(y, dtype, expected, what, "against nn.MultiheadAttention with the same weights and a causal "
                       "mask (query i sees keys j <= i; scale 1/sqrt(d_head))")


_check_gqa_torch()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_GroupedQueryAttention_groups", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: 1 < n_kv_heads < n_heads and n_kv_heads = 1 (multi-query attention), against the tests' attention
# written head by head (query head h reads kv head h // group), float64 and float32.
### BEGIN HIDDEN TESTS
def _linear(x, p, name):
    return F.linear(x, p[f"{name}.weight"].to(x.dtype), None if p.get(f"{name}.bias") is None else p[f"{name}.bias"].to(x.dtype))


def _gqa_oracle(x, p, heads, kv_heads):
    """The tests' grouped-query attention from the parameters p, head by head, in float64."""
    x = x.double()
    q, k, v = (_linear(x, p, name) for name in ("q", "k", "v"))
    d_head, t = q.shape[-1] // heads, x.shape[1]
    outputs = []
    for h in range(heads):
        g = h // (heads // kv_heads)
        part = slice(h * d_head, (h + 1) * d_head)
        kv = slice(g * d_head, (g + 1) * d_head)
        outputs.append(_attend(q[..., part], k[..., kv], v[..., kv], _causal(t, t)))
    return _linear(torch.cat(outputs, dim=-1), p, "out")


def _check_gqa_groups():
    for B, t, d_model, heads, kv_heads, bias, dtype in [(5, 7, 24, 8, 2, True, torch.float64),
                                                        (2, 3, 20, 4, 1, False, torch.float64),
                                                        (5, 7, 24, 6, 3, True, torch.float32)]:
        torch.manual_seed(heads + kv_heads)
        mine = GroupedQueryAttention(d_model, heads, kv_heads, bias=bias).to(dtype)
        p = _randomise(mine, 10 * heads + kv_heads)
        x = _inputs(B * t + heads, B, t, d_model, dtype=dtype)
        with torch.no_grad():
            y, _ = mine(x)
        what = (f"GroupedQueryAttention(d_model={d_model}, n_heads={heads}, n_kv_heads={kv_heads}, bias={bias}) on x "
                f"{tuple(x.shape)} {dtype}")
        _expect_answer(y, dtype, _gqa_oracle(x, p, heads, kv_heads), what, "against attention written head by "
                       f"head (query head h reads kv head h // {heads // kv_heads})")


_check_gqa_groups()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_GroupedQueryAttention_cache", "locked": true, "points": 1.5, "schema_version": 3, "solution": false}
# Hidden tests: decoding with the cache, one token at a time and several at a time, equals one call on the sequence.
### BEGIN HIDDEN TESTS
def _decode(module, x, steps, **kwargs):
    """Run `module` over x (B, n, d) in pieces of the sizes `steps`, passing the cache on: the outputs, concatenated."""
    cache, outputs, start = None, [], 0
    for step in steps:
        with torch.no_grad():
            y, cache = module(x[:, start:start + step], cache=cache, **kwargs)
        outputs.append(y)
        start += step
    return torch.cat(outputs, dim=1), cache


def _check_gqa_cache():
    for d_model, heads, kv_heads, steps, dtype in [(24, 8, 2, [1] * 7, torch.float64),
                                                   (20, 4, 1, [3, 1, 2, 1], torch.float64),
                                                   (24, 6, 3, [2, 1, 4], torch.float32)]:
        torch.manual_seed(kv_heads)
        mine = GroupedQueryAttention(d_model, heads, kv_heads, bias=True).to(dtype)
        _randomise(mine, heads)
        x = _inputs(kv_heads, 5, sum(steps), d_model, dtype=dtype)
        with torch.no_grad():
            whole, _ = mine(x)
        pieces, _ = _decode(mine, x, steps)
        expect_close(pieces, whole, f"the outputs of GroupedQueryAttention(d_model={d_model}, n_heads={heads}, "
                     f"n_kv_heads={kv_heads}) decoding {sum(steps)} tokens in steps of {steps} with the cache, against "
                     "one call on all of them (new query i of t sees the keys j <= T - t + i, T the tokens cached)")


_check_gqa_cache()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_GroupedQueryAttention_cache_shape", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: the cache after a call is (K, V), each (B, n_kv_heads, T, d_head) in x's dtype, holding every token's
# keys and values per kv head (the tests' own projections of x), not repeated per query head.
### BEGIN HIDDEN TESTS
def _check_gqa_cache_shape():
    for dtype in (torch.float64, torch.float32):
        torch.manual_seed(3)
        mine = GroupedQueryAttention(24, 8, 2, bias=True).to(dtype)
        p = _randomise(mine, 5)
        x = _inputs(7, 5, 7, 24, dtype=dtype)
        _, cache = _decode(mine, x, [4, 1, 2])
        assert isinstance(cache, tuple) and len(cache) == 2, "the cache is the tuple (K, V)"
        for tensor, name in zip(cache, "kv"):
            what = (f"the cached {name.upper()} after 7 tokens of x (5, 7, 24) {dtype}, d_model=24, n_heads=8, "
                    "n_kv_heads=2, d_head=3")
            expect_shape(tensor, (5, 2, 7, 3), what + " (B, n_kv_heads, T, d_head): one per kv head, not repeated")
            assert tensor.dtype == dtype, f"{what} is {tensor.dtype}: keep the dtype of x"
            expected = _linear(x.double(), p, name).view(5, 7, 2, 3).transpose(1, 2)
            expect_close(tensor, expected, what + f": the {name} projections of every token, kv head g in features "
                         "g * d_head to (g + 1) * d_head - 1, in time order")


_check_gqa_cache_shape()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "kv_cache_bytes_md", "locked": true, "schema_version": 3, "solution": false}
# ## 2. How much memory a cache holds (2 points)
#
# Write `kv_cache_bytes(kind, T, n_layers, d_model, n_heads, dtype_bytes, **kw)`
# returning an `int`: the bytes that **one sequence's** cache of `T` tokens
# holds over `n_layers` layers, each number taking `dtype_bytes` bytes, with
# `d_head = d_model / n_heads`, for
#
# - `"mha"`: multi-head attention, keys **and** values of every head;
# - `"gqa"`: grouped-query attention with the keyword `n_kv_heads`;
# - `"mla"`: latent attention with the keyword `d_latent`: the latent only
#   (exercise 3's cache `(C,)`);
# - `"window"`: a sliding window with the keywords `window` and `sinks`
#   (default 0): keys and values of all `n_heads` heads for
#   `min(T, window + sinks)` tokens;
# - `"linear"`: linear attention with the keyword `d_head` (required): per
#   head a `d_head × d_head` state and a `d_head` normaliser, whatever `T`
#   (exercise 5's `(S, z)`).
#
# These are the `nbytes` of the caches your modules of this notebook return
# for one sequence (`B = 1`) in each layer, added over the layers.
#
# Graded: the worked example below (0.5 point); `"mha"`, `"gqa"` and `"mla"`
# at other sizes (0.75); `"window"` and `"linear"` (0.75).

# %% nbgrader={"grade": false, "grade_id": "kv_cache_bytes", "locked": false, "schema_version": 3, "solution": true}
def kv_cache_bytes(kind, T, n_layers, d_model, n_heads, dtype_bytes, **kw):
    """Bytes of one sequence's cache of T tokens over n_layers layers, for kind "mha", "gqa", "mla", "window", "linear"."""
    ### BEGIN SOLUTION
    d_head = d_model // n_heads
    if kind == "mha":
        per_layer = 2 * T * n_heads * d_head
    elif kind == "gqa":
        per_layer = 2 * T * kw["n_kv_heads"] * d_head
    elif kind == "mla":
        per_layer = T * kw["d_latent"]
    elif kind == "window":
        per_layer = 2 * min(T, kw["window"] + kw.get("sinks", 0)) * n_heads * d_head
    elif kind == "linear":
        per_layer = n_heads * (kw["d_head"] * kw["d_head"] + kw["d_head"])
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return int(per_layer * n_layers * dtype_bytes)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_kv_cache_bytes", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Visible test: a worked example, a 7B-parameter model's sizes (32 layers, d_model = 4096, 32 heads of 128, 16-bit
# numbers) with 4,096 tokens: keys and values are 2 x 4096 x 32 x 4096 x 2 bytes = 2 GiB; with 8 kv heads, a quarter.
_mha = kv_cache_bytes("mha", 4096, 32, 4096, 32, 2)
assert int(_mha) == _mha and _mha == 2 * 4096 * 32 * 4096 * 2, (
    f"kv_cache_bytes('mha', T=4096, n_layers=32, d_model=4096, n_heads=32, dtype_bytes=2) is {_mha}, not "
    f"{2 * 4096 * 32 * 4096 * 2:,} (2 GiB): keys and values (2) x T x n_layers x d_model x dtype_bytes"
    + (" (you count the keys only?)" if _mha == 4096 * 32 * 4096 * 2 else ""))
_gqa_bytes = kv_cache_bytes("gqa", 4096, 32, 4096, 32, 2, n_kv_heads=8)
assert _gqa_bytes == 2 * 4096 * 32 * 8 * 128 * 2, (
    f"kv_cache_bytes('gqa', 4096, 32, 4096, 32, 2, n_kv_heads=8) is {_gqa_bytes}, not {2 * 4096 * 32 * 8 * 128 * 2:,} "
    "(a quarter of 2 GiB: 8 kv heads of d_head = 128 instead of 32)")

# %% nbgrader={"grade": true, "grade_id": "test_kv_cache_bytes_tokens", "locked": true, "points": 0.75, "schema_version": 3, "solution": false}
# Hidden tests: the caches that grow with T ("mha", "gqa", "mla") at other sizes, against the bytes of caches of the
# tests' own (empty tensors of the shapes exercises 1 and 3 return, B = 1), added over the layers.
### BEGIN HIDDEN TESTS
_BYTES = {1: torch.int8, 2: torch.float16, 4: torch.float32, 8: torch.float64}


def _nbytes(*shapes, dtype_bytes, layers):
    return layers * sum(torch.empty(shape, dtype=_BYTES[dtype_bytes]).nbytes for shape in shapes)


def _check_kv_cache_bytes_tokens():
    for T, layers, d_model, heads, size in [(10, 3, 12, 4, 8), (1, 1, 6, 6, 4), (333, 7, 40, 5, 2)]:
        d_head = d_model // heads
        cases = [("mha", {}, [(1, heads, T, d_head)] * 2), ("gqa", {"n_kv_heads": 1}, [(1, 1, T, d_head)] * 2),
                 ("mla", {"d_latent": 5}, [(1, T, 5)])]
        if heads % 2 == 0:
            cases.append(("gqa", {"n_kv_heads": 2}, [(1, 2, T, d_head)] * 2))
        for kind, kw, shapes in cases:
            got, expected = kv_cache_bytes(kind, T, layers, d_model, heads, size, **kw), _nbytes(
                *shapes, dtype_bytes=size, layers=layers)
            call = ", ".join([repr(kind), f"T={T}", f"n_layers={layers}", f"d_model={d_model}", f"n_heads={heads}",
                              f"dtype_bytes={size}"] + [f"{k}={v}" for k, v in kw.items()])
            assert got == expected, (
                f"kv_cache_bytes({call}) is {got}, but the caches hold "
                f"{expected:,} bytes: tensors of shapes {shapes} per layer")


_check_kv_cache_bytes_tokens()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_kv_cache_bytes_bounded", "locked": true, "points": 0.75, "schema_version": 3, "solution": false}
# Hidden tests: the bounded caches: "window" (min(T, window + sinks) tokens, with and without sinks, T below and above
# the bound) and "linear" (S and z per head, whatever T).
### BEGIN HIDDEN TESTS
def _check_kv_cache_bytes_bounded():
    for T, layers, d_model, heads, size, window, sinks in [(100, 2, 12, 3, 4, 16, 4), (10, 3, 12, 3, 2, 16, 4),
                                                           (18, 1, 8, 2, 8, 16, 4), (50, 4, 10, 5, 2, 7, 0)]:
        kw = {"window": window} if sinks == 0 else {"window": window, "sinks": sinks}
        kept = min(T, window + sinks)
        got = kv_cache_bytes("window", T, layers, d_model, heads, size, **kw)
        expected = _nbytes(*[(1, heads, kept, d_model // heads)] * 2, dtype_bytes=size, layers=layers)
        assert got == expected, (
            f"kv_cache_bytes('window', T={T}, n_layers={layers}, d_model={d_model}, n_heads={heads}, dtype_bytes={size}, "
            f"{', '.join(f'{k}={v}' for k, v in kw.items())}) is {got}, not {expected:,}: keys and values of all heads "
            f"for min(T, window + sinks) = {kept} tokens")
    for T in (1, 1000):
        for layers, d_model, heads, d_head, size in [(2, 12, 3, 4, 4), (5, 64, 4, 16, 2)]:
            got = kv_cache_bytes("linear", T, layers, d_model, heads, size, d_head=d_head)
            expected = _nbytes((1, heads, d_head, d_head), (1, heads, d_head), dtype_bytes=size, layers=layers)
            assert got == expected, (
                f"kv_cache_bytes('linear', T={T}, n_layers={layers}, d_model={d_model}, n_heads={heads}, "
                f"dtype_bytes={size}, d_head={d_head}) is {got}, not {expected:,}: per head a d_head x d_head state S "
                "and a d_head normaliser z, whatever T")


_check_kv_cache_bytes_bounded()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "mla_md", "locked": true, "schema_version": 3, "solution": false}
# ## 3. Latent attention, naive and absorbed (5 points)
#
# Multi-head latent attention caches one small vector per token, the latent
# $c_j = $ `down(x_j)` of `d_latent` numbers, and rebuilds every head's keys and
# values from it. Write `LatentAttention(d_model, n_heads, d_latent,
# bias=False)` with `d_head = d_model / n_heads` and these layers (all with
# `bias=bias`):
#
# - `self.down = nn.Linear(d_model, d_latent)`;
# - `self.up_k` and `self.up_v = nn.Linear(d_latent, d_model)`: head `h`'s key
#   and value are features `h·d_head … (h+1)·d_head − 1` of `up_k(c)` and
#   `up_v(c)`;
# - `self.q` and `self.out`, each an `nn.Linear(d_model, d_model)` (query head `h` is
#   the same slice of `q(x)`; `out` mixes the heads, concatenated in order).
#
# Causal as in exercise 1, scale `1/√d_head`. `forward(x, cache=None,
# absorbed=False)` returns `(y (B, t, d_model), cache)` where the cache is
# the tuple `(C,)`, `C (B, T, d_latent)`: the latents of every token so far,
# and nothing else.
#
# - `absorbed=False` (naive): rebuild the keys and values of all `T` tokens
#   with `up_k` and `up_v`, then attend as usual.
# - `absorbed=True`: fold `up_k`'s weight into the query and `up_v`'s into the
#   output. Writing $W^K_h$ for head `h`'s rows of `up_k.weight`
#   (`d_head × d_latent`), the score is
#   $q_h \cdot (W^K_h c_j + b^K_h) = (W^{K\top}_h q_h)\cdot c_j + q_h\cdot b^K_h$:
#   the query moved into the latent space meets the latents themselves. And
#   since each query's weights sum to 1, the head's output is
#   $W^V_h \big(\sum_j a_{j}\, c_j\big) + b^V_h$. It gives the same output,
#   **biases included**.
#
# **The bound (tested, with these numbers):** in a decode step of the absorbed
# form, no tensor has both a token axis of length `T` and a `d_head` or
# `d_model` axis. With `B = 1`, `d_model = 64`, `n_heads = 2` (`d_head = 32`),
# `d_latent = 4`, a cache of 399 latents and one new token (`T = 400`), no
# PyTorch operation of `forward(x, cache, absorbed=True)` outputs a tensor of
# `T · d_head = 12,800` elements or more (seen with `largest_operation_of`,
# given above; the naive form's keys `up_k(C)` alone have `T · d_model = 25,600`,
# while the cache has 1,600 and the scores of both heads 800).
#
# Graded: the worked example below (1 point); the naive form against the
# tests' attention (1); the absorbed form against it, biases included (1);
# decoding with the cache, naive and absorbed, against one call (1); the
# cache's shape, dtype and contents (0.5); the bound (0.5).

# %% nbgrader={"grade": false, "grade_id": "LatentAttention", "locked": false, "schema_version": 3, "solution": true}
class LatentAttention(nn.Module):
    """Causal multi-head latent attention: x (B, t, d_model), cache (C,) or None -> (y (B, t, d_model), (C,))."""

    def __init__(self, d_model, n_heads, d_latent, bias=False):
        super().__init__()
        ### BEGIN SOLUTION
        if d_model % n_heads:
            raise ValueError(f"n_heads={n_heads} must divide d_model={d_model}")
        self.n_heads, self.d_head, self.d_latent = n_heads, d_model // n_heads, d_latent
        self.down = nn.Linear(d_model, d_latent, bias=bias)
        self.up_k = nn.Linear(d_latent, d_model, bias=bias)
        self.up_v = nn.Linear(d_latent, d_model, bias=bias)
        self.q = nn.Linear(d_model, d_model, bias=bias)
        self.out = nn.Linear(d_model, d_model, bias=bias)
        ### END SOLUTION

    def forward(self, x, cache=None, absorbed=False):
        ### BEGIN SOLUTION
        B, t, d_model = x.shape
        H, d_head = self.n_heads, self.d_head
        C = self.down(x)
        if cache is not None:
            C = torch.cat([cache[0], C], dim=1)  # (B, T, d_latent)
        T = C.shape[1]
        q = self.q(x).view(B, t, H, d_head).transpose(1, 2)  # (B, H, t, d_head)
        allowed = torch.arange(T, device=x.device) <= torch.arange(t, device=x.device)[:, None] + (T - t)
        if not absorbed:
            k, v = (layer(C).view(B, T, H, d_head).transpose(1, 2) for layer in (self.up_k, self.up_v))
            scores = q @ k.transpose(-2, -1) / math.sqrt(d_head)
            weights = torch.softmax(scores.masked_fill(~allowed, -math.inf), dim=-1)
            heads = weights @ v  # (B, H, t, d_head)
        else:
            W_k = self.up_k.weight.view(H, d_head, self.d_latent)
            W_v = self.up_v.weight.view(H, d_head, self.d_latent)
            # up_k's bias adds q_h . b_h to every score of a query: the same for all its keys, so softmax ignores it.
            q_latent = q @ W_k  # (B, H, t, d_latent)
            scores = q_latent @ C[:, None].transpose(-2, -1) / math.sqrt(d_head)  # (B, H, t, T)
            weights = torch.softmax(scores.masked_fill(~allowed, -math.inf), dim=-1)
            heads = (weights @ C[:, None]) @ W_v.transpose(-2, -1)  # (B, H, t, d_head)
            if self.up_v.bias is not None:
                heads = heads + self.up_v.bias.view(H, 1, d_head)  # the weights sum to 1
        return self.out(heads.transpose(1, 2).reshape(B, t, d_model)), (C,)
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_LatentAttention", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: the layers' shapes, the output's and cache's shapes, and a worked example: with bias, absorbed=True
# gives what absorbed=False gives (d_model = 12, 3 heads of 4, d_latent = 5), and one token after a cache of the
# first tokens gives what a call on them all gives for the last token.
torch.manual_seed(0)
_mla = LatentAttention(12, 3, 5, bias=True).double()
for _name, _shape in [("down", (5, 12)), ("up_k", (12, 5)), ("up_v", (12, 5)), ("q", (12, 12)), ("out", (12, 12))]:
    assert isinstance(getattr(_mla, _name, None), nn.Linear), f"LatentAttention needs self.{_name}, an nn.Linear"
    expect_shape(getattr(_mla, _name).weight, _shape, f"{_name}.weight for d_model=12, n_heads=3, d_latent=5")
_x = torch.randn(2, 6, 12, dtype=torch.float64)
with torch.no_grad():
    for _layer in (_mla.down, _mla.up_k, _mla.up_v, _mla.q, _mla.out):
        _layer.weight.mul_(3.0)  # larger weights: scores that differ, so a wrong fold shows
        _layer.bias.uniform_(-1.0, 1.0)
    _naive, _cache = _mla(_x)
    _absorbed, _ = _mla(_x, absorbed=True)
    _last, _ = _mla(_x[:, 5:], cache=(_cache[0][:, :5],), absorbed=True)
expect_shape(_naive, (2, 6, 12), "the output for x (2, 6, 12)")
assert isinstance(_cache, tuple) and len(_cache) == 1, "the cache is the tuple (C,), the latents only"
expect_shape(_cache[0], (2, 6, 5), "the cached latents C (B, T, d_latent)")
expect_close(_absorbed, _naive, "the output of absorbed=True against absorbed=False (with biases): head h's rows of "
             "up_k.weight are W_k = up_k.weight.view(n_heads, d_head, d_latent)[h], and the score is (W_kᵀ q_h) · c_j")
expect_close(_last[:, 0], _naive[:, 5], "the output of the last token decoded (absorbed) after a cache of the first 5 "
             "latents, against the last token of one call on all 6")

# %% nbgrader={"grade": true, "grade_id": "test_LatentAttention_naive", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: absorbed=False against the tests' attention written from the parameters, float64 and float32.
### BEGIN HIDDEN TESTS
def _mla_oracle(x, p, heads):
    """The tests' latent attention from the parameters p: keys and values rebuilt from the latents, in float64."""
    x = x.double()
    C = _linear(x, p, "down")
    q, k, v = _linear(x, p, "q"), _linear(C, p, "up_k"), _linear(C, p, "up_v")
    d_head, t = q.shape[-1] // heads, x.shape[1]
    outputs = [_attend(q[..., h * d_head:(h + 1) * d_head], k[..., h * d_head:(h + 1) * d_head],
                       v[..., h * d_head:(h + 1) * d_head], _causal(t, t)) for h in range(heads)]
    return _linear(torch.cat(outputs, dim=-1), p, "out")


_MLA_SHAPES = [(2, 7, 20, 4, 6, True, torch.float64), (3, 5, 12, 2, 7, False, torch.float64),
               (2, 6, 12, 3, 5, True, torch.float32)]  # B, t, d_model, n_heads, d_latent, bias, dtype


def _check_mla(absorbed):
    for B, t, d_model, heads, d_latent, bias, dtype in _MLA_SHAPES:
        torch.manual_seed(d_latent)
        mine = LatentAttention(d_model, heads, d_latent, bias=bias).to(dtype)
        p = _randomise(mine, d_model + d_latent, scale=0.6)
        x = _inputs(d_latent, B, t, d_model, dtype=dtype)
        with torch.no_grad():
            y, _ = mine(x, absorbed=absorbed)
        what = (f"LatentAttention(d_model={d_model}, n_heads={heads}, d_latent={d_latent}, bias={bias}) with "
                f"absorbed={absorbed} on x {tuple(x.shape)} {dtype}")
        _expect_answer(y, dtype, _mla_oracle(x, p, heads), what, "against attention with the keys and values "
                       "rebuilt from the latents" + (" (biases included: the output of head h gains up_v's bias b_h, "
                                                     "since its weights sum to 1)" if absorbed and bias else ""))


_check_mla(absorbed=False)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_LatentAttention_absorbed", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: absorbed=True against the same attention, biases included, float64 and float32.
### BEGIN HIDDEN TESTS
_check_mla(absorbed=True)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_LatentAttention_cache", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: decoding with the cache (one token and several at a time, naive and absorbed) equals one call.
### BEGIN HIDDEN TESTS
def _check_mla_cache():
    for absorbed in (False, True):
        for B, t, d_model, heads, d_latent, bias, dtype in _MLA_SHAPES:
            torch.manual_seed(t)
            mine = LatentAttention(d_model, heads, d_latent, bias=bias).to(dtype)
            _randomise(mine, t, scale=0.6)
            x = _inputs(t + d_latent, B, t, d_model, dtype=dtype)
            with torch.no_grad():
                whole, _ = mine(x, absorbed=absorbed)
            for steps in ([1] * t, [2, 1, t - 3]):
                pieces, _ = _decode(mine, x, steps, absorbed=absorbed)
                expect_close(pieces, whole, f"the outputs of LatentAttention(d_model={d_model}, n_heads={heads}, "
                             f"d_latent={d_latent}, bias={bias}), absorbed={absorbed}, decoding {t} tokens in steps of "
                             f"{steps} with the cache, against one call on all of them")


_check_mla_cache()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_LatentAttention_cache_shape", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: the cache is (C,), C (B, T, d_latent) in x's dtype: down(x) of every token so far, nothing else.
### BEGIN HIDDEN TESTS
def _check_mla_cache_shape():
    for dtype, absorbed in [(torch.float64, False), (torch.float32, True)]:
        torch.manual_seed(4)
        mine = LatentAttention(20, 4, 6, bias=True).to(dtype)
        p = _randomise(mine, 6)
        x = _inputs(11, 2, 7, 20, dtype=dtype)
        _, cache = _decode(mine, x, [3, 1, 3], absorbed=absorbed)
        what = f"the cache after 7 tokens of x (2, 7, 20) {dtype}, d_latent=6, absorbed={absorbed}"
        assert isinstance(cache, tuple) and len(cache) == 1, f"{what} must be the tuple (C,): the latents, nothing else"
        expect_shape(cache[0], (2, 7, 6), what + ": C (B, T, d_latent)")
        assert cache[0].dtype == dtype, f"{what} is {cache[0].dtype}: keep the dtype of x"
        expect_close(cache[0], _linear(x.double(), p, "down"), what + ": down(x) of every token, in time order")


_check_mla_cache_shape()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_LatentAttention_memory", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: the stated bound: a decode step of absorbed=True (B = 1, d_model = 64, 2 heads of 32, d_latent = 4,
# T = 400) runs no operation that outputs T * d_head = 12,800 elements or more (largest_operation_of).
### BEGIN HIDDEN TESTS
def _check_mla_memory():
    torch.manual_seed(8)
    mine = LatentAttention(64, 2, 4, bias=True).double()
    generator = torch.Generator().manual_seed(9)
    C = torch.randn(1, 399, 4, dtype=torch.float64, generator=generator)
    x = torch.randn(1, 1, 64, dtype=torch.float64, generator=generator)
    with torch.no_grad():
        elements, operation = largest_operation_of(mine, (x,), kwargs={"cache": (C,), "absorbed": True})
    assert elements < 400 * 32, (
        f"a decode step of LatentAttention(64, 2, 4) with absorbed=True (one new token after 399 cached latents, "
        f"T = 400) ran an operation ({operation}) that output {elements:,} elements, not fewer than T * d_head = "
        "12,800: it formed keys or values of all T tokens (up_k(C) alone has T * d_model = 25,600). Move the query "
        "into the latent space instead (W_kᵀ q_h, d_latent numbers per head) and apply up_v's weight after the "
        "weighted sum of the latents")


_check_mla_memory()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "window_md", "locked": true, "schema_version": 3, "solution": false}
# ## 4. A sliding window with attention sinks (4 points)
#
# A sliding window lets each token see only the last `window` tokens, itself
# included, so the cache never holds more than `window` of them. Xiao et al.
# (2024) found that a model trained with full attention breaks down once the
# first tokens leave the window, because it parks much of its attention on
# them, and that keeping those few first tokens, the **attention sinks**, in
# the cache restores it.
#
# In one cell, write:
#
# - `window_mask(n, window, sinks=0)`: a `torch.bool` tensor `(n, n)`,
#   `True` = may attend: query `i` sees key `j` when `j ≤ i` and
#   (`i − j < window` or `j < sinks`). For example `window_mask(5, 2)` lets
#   query 3 see keys 2 and 3, and `window_mask(5, 2, sinks=1)` also key 0.
# - `SlidingWindowCache(window, sinks=0)`, a class whose method
#   `append(k, v)` takes the keys and values of `t ≥ 1` new tokens,
#   `k, v (B, H, t, d)`, adds them, evicts what the window no longer needs,
#   and returns the kept `(K, V)`, each `(B, H, kept, d)`, **in time order**:
#   the first `sinks` tokens, then the last `window` tokens, each token once.
#   While fewer than `window + sinks` tokens have come, it keeps them all.
#   For example, with `window=3, sinks=1`, after tokens 0 to 7 it holds
#   tokens 0, 5, 6, 7, whether they came one at a time or together.
#
# **The bound.** Evicting is what makes the window cheap, so it is graded:
# after each `append` returns, the cache object holds the keys and values of
# at most `window + sinks` tokens, however it stores them (tensors, lists of
# tensors, a deque). The tests append 50 tokens of `B = 2`, `H = 3`, `d = 5`,
# one and three at a time, to `SlidingWindowCache(4, sinks=2)` and to
# `SlidingWindowCache(3)`, and after each `append` count the floating-point
# numbers held in the cache's attributes, walked through lists, tuples,
# dicts, deques, sets and nested objects (`held_by`): with window 4 and 2
# sinks at most 6 tokens' keys and values, `6 · 2 · 3 · 5 · 2 = 360` numbers,
# with window 3 at most 180. Integers (a count, positions) are not counted,
# and a few floats besides (fewer than one token's key, 30) are allowed; a
# cache that keeps every token and slices on return holds 3,000 after 50
# tokens.
#
# The tests rotate each query and key with `apply_rope` (chapter 5's
# rotary embedding, given below) at its **absolute** position before the key
# goes into your cache; attending from each new token to what `append`
# returns must then equal one call masked with `window_mask`: RoPE scores
# depend on positions only through their difference, which caching does not
# change.
#
# Graded: the worked example below (0.5 points); `window_mask` against the
# rule above for many sizes (1); what the cache returns after appends of one
# and of several tokens (1); the bound on what it holds (0.5); decoding with
# RoPE through the cache against the masked call (1).

# %% nbgrader={"grade": false, "grade_id": "rope", "locked": true, "schema_version": 3, "solution": false}
def apply_rope(x, positions=None, base=10000.0):
    """Chapter 5's rotary position embedding, given: x (..., n, d) with d even, positions (n,) integers (default
    0 .. n-1) -> the same shape and dtype. Feature pair (2i, 2i+1) turns by the angle positions * base^(-2i/d),
    written here as a product of complex numbers."""
    n, d = x.shape[-2], x.shape[-1]
    positions = torch.arange(n) if positions is None else torch.as_tensor(positions)
    angles = positions.to(torch.float64)[:, None] * base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    pairs = torch.view_as_complex(x.to(torch.float64).reshape(*x.shape[:-1], d // 2, 2).contiguous())
    turned = pairs * torch.polar(torch.ones_like(angles), angles)
    return torch.view_as_real(turned).reshape(x.shape).to(x.dtype)


_apply_rope = apply_rope  # the tests' own copy: a function of yours under this name changes nothing for them

# %% nbgrader={"grade": false, "grade_id": "window_mask", "locked": false, "schema_version": 3, "solution": true}
def window_mask(n, window, sinks=0):
    """(n, n) bool, True = may attend: query i sees key j when j <= i and (i - j < window or j < sinks)."""
    ### BEGIN SOLUTION
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    return (j <= i) & ((i - j < window) | (j < sinks))
    ### END SOLUTION


class SlidingWindowCache:
    """Keeps the first `sinks` tokens and the last `window` ones: append(k, v) with k, v (B, H, t, d) -> (K, V)."""

    def __init__(self, window, sinks=0):
        ### BEGIN SOLUTION
        self.window, self.sinks = window, sinks
        self.K = self.V = None
        ### END SOLUTION

    def append(self, k, v):
        ### BEGIN SOLUTION
        K = k if self.K is None else torch.cat([self.K, k], dim=2)
        V = v if self.V is None else torch.cat([self.V, v], dim=2)
        if K.shape[2] > self.window + self.sinks:
            # Once more than window + sinks tokens have come, the first `sinks` kept are tokens 0 .. sinks - 1.
            K = torch.cat([K[:, :, :self.sinks], K[:, :, K.shape[2] - self.window:]], dim=2)
            V = torch.cat([V[:, :, :self.sinks], V[:, :, V.shape[2] - self.window:]], dim=2)
        self.K, self.V = K, V
        return K, V
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_window_mask", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Visible test: the worked examples: window_mask(5, 2) and window_mask(5, 2, sinks=1), and a cache with window=3,
# sinks=1 fed tokens 0 to 7 (each key and value holds its token's number) one at a time, then all at once.
_expected = torch.tensor([[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 1, 1, 0, 0], [0, 0, 1, 1, 0], [0, 0, 0, 1, 1]]).bool()
_mask = window_mask(5, 2)
assert torch.is_tensor(_mask) and _mask.dtype == torch.bool, "window_mask returns a torch.bool tensor"
expect_shape(_mask, (5, 5), "window_mask(5, 2)")
assert torch.equal(_mask, _expected), (
    f"window_mask(5, 2) should be {_expected.int().tolist()} (query i sees keys i - 1 and i), not {_mask.int().tolist()}")
_expected[2:, 0] = True
_mask = window_mask(5, 2, sinks=1)
assert torch.equal(_mask, _expected), (
    f"window_mask(5, 2, sinks=1) should be {_expected.int().tolist()} (also key 0, the sink, for every query), not "
    f"{_mask.int().tolist()}")
_tokens = torch.arange(8, dtype=torch.float64).view(1, 1, 8, 1)
_window_cache = SlidingWindowCache(3, sinks=1)
for _p in range(8):
    _K, _V = _window_cache.append(_tokens[:, :, _p:_p + 1], -_tokens[:, :, _p:_p + 1])
    _kept = [0] + list(range(max(1, _p - 2), _p + 1)) if _p >= 4 else list(range(_p + 1))
    assert _K.flatten().tolist() == _kept and _V.flatten().tolist() == [-p for p in _kept], (
        f"after tokens 0 to {_p} one at a time, SlidingWindowCache(3, sinks=1) should return the keys of tokens {_kept} "
        f"(the sink, token 0, then the last 3, in time order), not {_K.flatten().tolist()}")
_K, _V = SlidingWindowCache(3, sinks=1).append(_tokens, -_tokens)
assert _K.flatten().tolist() == [0, 5, 6, 7], (
    f"SlidingWindowCache(3, sinks=1).append of tokens 0 to 7 at once should return tokens [0, 5, 6, 7], not "
    f"{_K.flatten().tolist()}")

# %% nbgrader={"grade": true, "grade_id": "test_window_mask_values", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: window_mask against the rule, key by key, for many n, windows (also longer than n) and sinks.
### BEGIN HIDDEN TESTS
def _check_window_mask_values():
    for n in (1, 2, 6, 9):
        for window in (1, 2, 3, 10):
            for sinks in (0, 1, 4):
                mask = window_mask(n, window, sinks=sinks) if sinks else window_mask(n, window)
                expected = [[j <= i and (i - j < window or j < sinks) for j in range(n)] for i in range(n)]
                assert torch.is_tensor(mask) and mask.dtype == torch.bool, "window_mask returns a torch.bool tensor"
                expect_shape(mask, (n, n), f"window_mask({n}, {window}, sinks={sinks})")
                wrong = [(i, j) for i in range(n) for j in range(n) if bool(mask[i, j]) != expected[i][j]]
                if wrong:
                    i, j = wrong[0]
                    raise AssertionError(
                        f"window_mask({n}, {window}, sinks={sinks})[{i}, {j}] is {bool(mask[i, j])}: query {i} "
                        + ("may" if expected[i][j] else "may not") + f" attend to key {j} (j <= i and (i - j < window "
                        f"or j < sinks)); {len(wrong)} entries are wrong")


_check_window_mask_values()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_window_mask_cache", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: what SlidingWindowCache keeps after appends of 1 to 5 tokens at a time, with and without sinks: the
# first sinks tokens, then the last window ones, in time order, each once (keys and values, B = 2, H = 3, d = 4).
### BEGIN HIDDEN TESTS
def _numbered(n, sign=1.0):
    """Keys (2, 3, n, 4) whose every entry names its token: token p holds p + 100 b + 10 h + 0.1 f (batch b, head h)."""
    b, h, p, f = torch.meshgrid(torch.arange(2), torch.arange(3), torch.arange(n), torch.arange(4), indexing="ij")
    return sign * (p + 100 * b + 10 * h + 0.1 * f).double()


def _check_window_cache():
    for window, sinks, steps in [(3, 2, [1, 1, 4, 1, 3, 1, 1]), (4, 0, [2, 3, 1, 5]), (2, 1, [5, 1, 1, 2]),
                                 (6, 3, [1, 2, 1])]:
        cache = SlidingWindowCache(window, sinks=sinks) if sinks else SlidingWindowCache(window)
        keys, values = _numbered(sum(steps)), _numbered(sum(steps), -1.0)
        start = 0
        for number, step in enumerate(steps):
            K, V = cache.append(keys[:, :, start:start + step], values[:, :, start:start + step])
            start += step
            kept = list(range(start)) if start <= window + sinks else list(range(sinks)) + list(range(start - window, start))
            what = (f"SlidingWindowCache({window}, sinks={sinks}) after tokens 0 to {start - 1}, appended in steps of "
                    f"{steps[:number + 1]}")
            got = [round(float(p)) for p in K[0, 0, :, 0]] if K.dim() == 4 else None
            assert got == kept, (f"the keys {what} should be those of tokens {kept} (the first {sinks}, then the last "
                                 f"{window}, in time order, each once), not {got}")
            expect_close(K, keys[:, :, kept], f"the keys {what} (every batch item, head and feature)")
            expect_close(V, values[:, :, kept], f"the values {what}")


_check_window_cache()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_window_mask_evicts", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: the stated bound: after each append of 50 tokens (B = 2, H = 3, d = 5, one and three at a time), the
# cache holds the keys and values of at most window + sinks tokens: the floating-point numbers found in its attributes
# (held_by) number at most (window + sinks) * 2 * 3 * 5 * 2 (360 for window 4 with 2 sinks), plus fewer than 30.
### BEGIN HIDDEN TESTS
def _check_window_evicts():
    B, H, n, d = 2, 3, 50, 5
    generator = torch.Generator().manual_seed(85)
    keys = torch.randn(B, H, n, d, dtype=torch.float64, generator=generator)
    values = torch.randn(B, H, n, d, dtype=torch.float64, generator=generator)
    for window, sinks in [(4, 2), (3, 0)]:
        cache = SlidingWindowCache(window, sinks=sinks) if sinks else SlidingWindowCache(window)
        bound = (window + sinks) * B * H * d * 2
        most = (-1, 0, [])  # (numbers held, after how many tokens, what held them)
        start, steps = 0, []
        while start < n:
            step = min(3 if len(steps) % 2 else 1, n - start)
            cache.append(keys[:, :, start:start + step], values[:, :, start:start + step])
            start += step
            steps.append(step)
            held = [entry for entry in held_by(cache) if entry[4]]
            numbers = sum(int(entry[3]) for entry in held)
            if numbers > most[0]:
                most = (numbers, start, held)
        numbers, after, held = most
        largest = max(held, key=lambda entry: entry[3]) if held else None
        where = f" (the largest: {largest[0] or 'the cache'}, {largest[1]} of shape {tuple(largest[2])})" if largest else ""
        assert numbers < bound + B * H * d, (
            f"after {after} tokens (appended one and three at a time, B = {B}, H = {H}, d = {d}), "
            f"SlidingWindowCache({window}, sinks={sinks}) holds {numbers:,} floating-point numbers in its attributes"
            f"{where}: the keys and values of {numbers / (2 * B * H * d):g} tokens ({B * H * d} numbers each for the "
            f"key and the value); a window of {window} with {sinks} sinks needs at most {window + sinks} tokens, "
            f"{bound:,} numbers. Evict in append: keep only the first {sinks} tokens and the last {window}")


_check_window_evicts()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_window_mask_rope", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: RoPE at absolute positions before caching; attending from each new token to the kept keys and values
# equals one call masked with the window (the tests' own mask and attention), window 4 with 2 sinks and without.
### BEGIN HIDDEN TESTS
def _check_window_rope():
    generator = torch.Generator().manual_seed(84)
    B, H, n, d, d_v = 1, 2, 13, 6, 3
    q, k = (torch.randn(B, H, n, d, dtype=torch.float64, generator=generator) * 2 for _ in range(2))
    v = torch.randn(B, H, n, d_v, dtype=torch.float64, generator=generator)
    q_rotated, k_rotated = _apply_rope(q), _apply_rope(k)
    for window, sinks in [(4, 2), (4, 0), (3, 1)]:
        allowed = torch.tensor([[j <= i and (i - j < window or j < sinks) for j in range(n)] for i in range(n)])
        expected = _attend(q_rotated, k_rotated, v, allowed)
        cache = SlidingWindowCache(window, sinks=sinks) if sinks else SlidingWindowCache(window)
        prefill = 5  # the first 5 tokens enter the cache together (their outputs come from the full computation)
        cache.append(k_rotated[:, :, :prefill], v[:, :, :prefill])
        for p in range(prefill, n):
            key = _apply_rope(k[:, :, p:p + 1], positions=[p])
            K, V = cache.append(key, v[:, :, p:p + 1])
            got = _attend(_apply_rope(q[:, :, p:p + 1], positions=[p]), K, V)
            expect_close(got[:, :, 0], expected[:, :, p], f"the output of token {p} attending to what "
                         f"SlidingWindowCache({window}, sinks={sinks}).append returns (RoPE at absolute positions, "
                         f"{prefill} tokens appended first, then one at a time), against attention over all {n} tokens "
                         "masked with the window")


_check_window_rope()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "linear_md", "locked": true, "schema_version": 3, "solution": false}
# ## 5. Linear attention: parallel, chunked, recurrent (5 points)
#
# Replace $\exp(q\cdot k)$ by a product of features $\phi(q)\cdot\phi(k)$ with
# $\phi(x) = \operatorname{elu}(x) + 1$ (positive; Katharopoulos et al., 2020).
# Then the output of query $i$ is
#
# $$o_i = \frac{\phi(q_i)^\top S_i}{\phi(q_i)^\top z_i},\qquad
#   S_i = \sum_{j\le i} \phi(k_j)\, v_j^\top\ (d \times d_v),\qquad
#   z_i = \sum_{j\le i} \phi(k_j)\ (d),$$
#
# with no epsilon and no scale. The sums can be carried from one token to the
# next: the whole cache is $(S, z)$, whatever the length.
#
# In one cell, write:
#
# - `linear_attention(q, k, v, causal=True, chunk_size=None)` for
#   `q, k (B, H, n, d)`, `v (B, H, n, d_v)` → `(B, H, n, d_v)`.
#   `causal=False` sums over every key ($S$ and $z$ over all $n$ tokens).
#   With `causal=True`: `chunk_size=None` is the **parallel** form, the
#   `n × n` matrix $\phi(Q)\phi(K)^\top$ masked to $j \le i$, times $V$ and
#   divided by its row sums; `chunk_size=c` is the **chunked** form: within
#   each chunk of `c` tokens the masked product, and from the earlier chunks
#   the carried $S$ and $z$; for every `c ≥ 1`, whether it divides `n` or not.
# - `recurrent_linear_attention(q, k, v, state=None)` → `(out, (S, z))`:
#   causal, token by token, `S (B, H, d, d_v)` and `z (B, H, d)` after the
#   last token; with `state=(S, z)` it continues from there (as if the
#   earlier tokens came first).
#
# The three forms agree to `1e-10` in float64. Keep the dtype you are given.
#
# **The bound (tested, with these numbers):** the chunked and the recurrent
# forms never form the `n × n` matrix. With `B = H = 1`, `n = 64`, `d = 3`,
# `d_v = 5`, neither `linear_attention(q, k, v, chunk_size=8)` nor
# `recurrent_linear_attention(q, k, v)` runs a PyTorch operation that outputs
# `n · n = 4,096` elements or more (seen with `largest_operation_of`; a
# chunk's masked product has `8 × 8 = 64`, the state `S` has 15).
#
# Graded: the worked example below (1 point); the parallel form and
# `causal=False` against the tests' sums (1); the chunked form for chunk
# sizes that do and do not divide `n` (1); the recurrent form and its state
# (1); continuing from a state (0.5); the bound (0.5).

# %% nbgrader={"grade": false, "grade_id": "linear_attention", "locked": false, "schema_version": 3, "solution": true}
def linear_attention(q, k, v, causal=True, chunk_size=None):
    """Linear attention with phi = elu + 1: q, k (B, H, n, d), v (B, H, n, d_v) -> (B, H, n, d_v)."""
    ### BEGIN SOLUTION
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    if not causal:
        S, z = phi_k.transpose(-2, -1) @ v, phi_k.sum(dim=-2)  # (B, H, d, d_v), (B, H, d)
        return (phi_q @ S) / (phi_q @ z[..., None])
    n = q.shape[-2]
    c = n if chunk_size is None else chunk_size  # the parallel form is one chunk with nothing carried
    S = q.new_zeros(*q.shape[:-2], q.shape[-1], v.shape[-1])
    z = q.new_zeros(*q.shape[:-2], q.shape[-1], 1)
    outputs = []
    for start in range(0, n, c):
        fq, fk, vc = phi_q[..., start:start + c, :], phi_k[..., start:start + c, :], v[..., start:start + c, :]
        within = torch.tril(fq @ fk.transpose(-2, -1))  # (B, H, c, c), j <= i inside the chunk
        outputs.append((fq @ S + within @ vc) / (fq @ z + within.sum(dim=-1, keepdim=True)))
        S = S + fk.transpose(-2, -1) @ vc
        z = z + fk.sum(dim=-2)[..., None]
    return torch.cat(outputs, dim=-2)
    ### END SOLUTION


def recurrent_linear_attention(q, k, v, state=None):
    """Causal linear attention token by token: -> (out (B, H, n, d_v), (S (B, H, d, d_v), z (B, H, d)))."""
    ### BEGIN SOLUTION
    if state is None:
        S = q.new_zeros(*q.shape[:-2], q.shape[-1], v.shape[-1])
        z = q.new_zeros(*q.shape[:-1][:-1], q.shape[-1])
    else:
        S, z = state
    outputs = []
    for i in range(q.shape[-2]):
        phi_q, phi_k = F.elu(q[..., i, :]) + 1, F.elu(k[..., i, :]) + 1  # (B, H, d)
        S = S + phi_k[..., :, None] * v[..., i, None, :]
        z = z + phi_k
        outputs.append((phi_q[..., None, :] @ S)[..., 0, :] / (phi_q * z).sum(dim=-1, keepdim=True))
    out = torch.stack(outputs, dim=-2) if outputs else v.new_zeros(v.shape)
    return out, (S, z)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_linear_attention", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: the shapes, and a worked example: with q = k = 0, phi(0) = 1 gives every key the same weight, so token
# i's output is the mean of v_0 .. v_i (causal) or of all the values (causal=False), in every form.
_v = torch.tensor([1.0, 3.0, 2.0, 6.0, 8.0], dtype=torch.float64).view(1, 1, 5, 1) * torch.tensor([1.0, -1.0],
                                                                                                  dtype=torch.float64)
_zeros = torch.zeros(1, 1, 5, 3, dtype=torch.float64)
_running = torch.tensor([1.0, 2.0, 2.0, 3.0, 4.0], dtype=torch.float64).view(1, 1, 5, 1) * torch.tensor([1.0, -1.0],
                                                                                                          dtype=torch.float64)
expect_shape(linear_attention(torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 6)), (2, 3, 4, 6),
             "linear_attention of q, k (2, 3, 4, 5) and v (2, 3, 4, 6)")
expect_close(linear_attention(_zeros, _zeros, _v), _running, "linear_attention(q = 0, k = 0, v = (1, 3, 2, 6, 8)): the "
             "running means (1, 2, 2, 3, 4), since phi(0) = elu(0) + 1 = 1 weighs every key alike (phi = relu gives 0 / 0)")
expect_close(linear_attention(_zeros, _zeros, _v, causal=False), _running[:, :, 4:].expand(1, 1, 5, 2),
             "linear_attention(q = 0, k = 0, v = (1, 3, 2, 6, 8), causal=False): the mean 4 for every token")
expect_close(linear_attention(_zeros, _zeros, _v, chunk_size=2), _running,
             "linear_attention(q = 0, k = 0, v = (1, 3, 2, 6, 8), chunk_size=2): the running means, with S and z (the "
             "sums of the earlier chunks) carried into each chunk")
_out, _state = recurrent_linear_attention(_zeros, _zeros, _v)
expect_close(_out, _running, "recurrent_linear_attention(q = 0, k = 0, v = (1, 3, 2, 6, 8))'s output")
assert isinstance(_state, tuple) and len(_state) == 2, "recurrent_linear_attention returns (out, (S, z))"
expect_close(_state[0], torch.tensor([[[[20.0, -20.0]] * 3]], dtype=torch.float64), "S after the 5 tokens (d = 3, "
             "d_v = 2): the sum of phi(k_j) v_jᵀ, each row 1 + 3 + 2 + 6 + 8 = 20")
expect_close(_state[1], torch.full((1, 1, 3), 5.0, dtype=torch.float64), "z after the 5 tokens: the sum of phi(k_j) = 5")

# %% nbgrader={"grade": true, "grade_id": "test_linear_attention_parallel", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: the parallel form (chunk_size=None) and causal=False against the tests' own sums, float64 and float32.
### BEGIN HIDDEN TESTS
def _linear_oracle(q, k, v, causal=True):
    """The tests' linear attention, query by query, in float64: (out, S_n, z_n)."""
    phi_q, phi_k, v = F.elu(q.double()) + 1, F.elu(k.double()) + 1, v.double()
    n, outputs = q.shape[-2], []
    for i in range(n):
        last = i + 1 if causal else n
        S = torch.einsum("bhjd,bhje->bhde", phi_k[..., :last, :], v[..., :last, :])
        z = phi_k[..., :last, :].sum(dim=-2)
        outputs.append(torch.einsum("bhd,bhde->bhe", phi_q[..., i, :], S) / (phi_q[..., i, :] * z).sum(-1, keepdim=True))
    S = torch.einsum("bhjd,bhje->bhde", phi_k, v)
    return torch.stack(outputs, dim=-2), S, phi_k.sum(dim=-2)


def _random_linear(seed, B, H, n, d, d_v, dtype=torch.float64):
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(B, H, n, d, dtype=torch.float64, generator=generator).to(dtype),
            torch.randn(B, H, n, d, dtype=torch.float64, generator=generator).to(dtype),
            torch.randn(B, H, n, d_v, dtype=torch.float64, generator=generator).to(dtype))


def _check_linear_parallel():
    for seed, (B, H, n, d, d_v), dtype in [(85, (2, 3, 7, 4, 5), torch.float64), (86, (1, 2, 9, 3, 4), torch.float32)]:
        q, k, v = _random_linear(seed, B, H, n, d, d_v, dtype)
        for causal in (True, False):
            got = linear_attention(q, k, v) if causal else linear_attention(q, k, v, causal=False)
            what = f"linear_attention(causal={causal}) for q, k {tuple(q.shape)}, v {tuple(v.shape)} {dtype}"
            _expect_answer(got, dtype, _linear_oracle(q, k, v, causal)[0], what, "against phi(q_i)ᵀ S_i / "
                           "phi(q_i)ᵀ z_i with phi = elu + 1 and sums over " + ("j <= i" if causal else "every key"))


_check_linear_parallel()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_linear_attention_chunked", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: the chunked form for chunk sizes 1, 2, 3, 4, 7 and 10 (n = 7; 2, 3, 4 do not divide it) and 4 for n = 8.
### BEGIN HIDDEN TESTS
def _check_linear_chunked():
    for seed, (B, H, n, d, d_v), sizes, dtype in [(87, (2, 3, 7, 4, 5), (1, 2, 3, 4, 7, 10), torch.float64),
                                                  (88, (3, 1, 8, 5, 2), (4, 3), torch.float64),
                                                  (89, (1, 2, 9, 3, 4), (2, 4), torch.float32)]:
        q, k, v = _random_linear(seed, B, H, n, d, d_v, dtype)
        expected = _linear_oracle(q, k, v)[0]
        for size in sizes:
            got = linear_attention(q, k, v, chunk_size=size)
            what = (f"linear_attention(chunk_size={size}) for n = {n} ({'dividing' if n % size == 0 else 'not dividing'}"
                    f" n), q, k {tuple(q.shape)}, v {tuple(v.shape)} {dtype}")
            _expect_answer(got, dtype, expected, what, "each chunk adds the masked product within it to the S and "
                           "z carried from all the earlier chunks (numerator and normaliser)")


_check_linear_chunked()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_linear_attention_recurrent", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: recurrent_linear_attention's output and its final state (S, z) against the tests' sums.
### BEGIN HIDDEN TESTS
def _check_linear_recurrent():
    for seed, (B, H, n, d, d_v), dtype in [(90, (2, 3, 7, 4, 5), torch.float64), (91, (1, 2, 6, 3, 4), torch.float32)]:
        q, k, v = _random_linear(seed, B, H, n, d, d_v, dtype)
        out, state = recurrent_linear_attention(q, k, v)
        expected, S, z = _linear_oracle(q, k, v)
        what = f"recurrent_linear_attention for q, k {tuple(q.shape)}, v {tuple(v.shape)} {dtype}"
        assert out.dtype == dtype, f"{what} returns {out.dtype}: keep the dtype you are given"
        expect_close(out, expected, f"the output of {what}")
        assert isinstance(state, tuple) and len(state) == 2, f"{what} returns (out, (S, z))"
        assert state[0].dtype == dtype and state[1].dtype == dtype, (
            f"the state (S, z) after {what} is ({state[0].dtype}, {state[1].dtype}): keep the dtype you are given")
        expect_close(state[0], S, f"S (B, H, d, d_v) after {what}: the sum over every token of phi(k_j) v_jᵀ")
        expect_close(state[1], z, f"z (B, H, d) after {what}: the sum over every token of phi(k_j)")


_check_linear_recurrent()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_linear_attention_state", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: continuing from a state: the tokens after the first 3, given the state of the tests' own sums over the
# first 3, give the outputs of the whole sequence for those tokens.
### BEGIN HIDDEN TESTS
def _check_linear_state():
    for seed, (B, H, n, d, d_v), split in [(92, (2, 3, 8, 4, 5), 3), (93, (1, 2, 5, 3, 4), 1)]:
        q, k, v = _random_linear(seed, B, H, n, d, d_v)
        expected, _, _ = _linear_oracle(q, k, v)
        _, S, z = _linear_oracle(q[..., :split, :], k[..., :split, :], v[..., :split, :])
        out, _ = recurrent_linear_attention(q[..., split:, :], k[..., split:, :], v[..., split:, :], state=(S, z))
        expect_close(out, expected[..., split:, :], f"the output of recurrent_linear_attention for tokens {split} to "
                     f"{n - 1} of q, k {tuple(q.shape)}, continuing from the state (S, z) of tokens 0 to {split - 1}")


_check_linear_state()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_linear_attention_memory", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: the stated bound: with B = H = 1, n = 64, d = 3, d_v = 5, chunk_size=8 and the recurrent form run no
# operation that outputs n * n = 4,096 elements or more (largest_operation_of).
### BEGIN HIDDEN TESTS
def _check_linear_memory():
    q, k, v = _random_linear(94, 1, 1, 64, 3, 5)
    forms = [("linear_attention(q, k, v, chunk_size=8)", linear_attention, {"chunk_size": 8}),
             ("recurrent_linear_attention(q, k, v)", recurrent_linear_attention, {})]
    for what, form, kwargs in forms:
        with torch.no_grad():
            elements, operation = largest_operation_of(form, (q, k, v), kwargs=kwargs)
        assert elements < 64 * 64, (
            f"{what} with B = H = 1, n = 64, d = 3, d_v = 5 ran an operation ({operation}) that output {elements:,} "
            "elements, not fewer than n * n = 4,096: it formed the n x n matrix of the parallel form. Within a chunk "
            "the masked product is chunk_size x chunk_size; across chunks, and token by token, carry S and z")


_check_linear_memory()
### END HIDDEN TESTS
