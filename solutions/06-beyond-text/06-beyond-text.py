# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false}
# # Exercise 6: attention beyond text
#
# Attention does not need words. In this notebook you turn images into
# sequences of patches and build a small vision transformer (Dosovitskiy et
# al., 2021) that you train on scikit-learn's handwritten digits, follow its
# attention through the layers with attention rollout (Abnar & Zuidema,
# 2020), pool a *set* of vectors by attention (Lee et al., 2019, the Set
# Transformer), and let the nodes of a graph attend to their neighbours
# (Veličković et al., 2018).
#
# | # | you build | points |
# |---|---|---|
# | 1 | `patchify(images, patch_size)` | 2 |
# | 2 | `ViT(image_size, patch_size, channels, num_classes, d_model, num_heads, num_layers)`, trained on the digits | 5 |
# | 3 | `attention_rollout(attention)` | 3 |
# | 4 | `AttentionPooling(d_model, num_heads, num_seeds=1)`, pooling a set (with padding) | 4 |
# | 5 | `GATLayer(in_dim, out_dim, num_heads=1, concat=True)`, attention over a graph | 4 |
# | | **total** | **18** |
#
# **How to work.** Replace every `raise NotImplementedError()` with your code.
# Keep the names, arguments and attribute names: the grader calls them. Do not
# edit or delete test cells; the grader restores its own copy of each. The
# notebook gives you `MultiHeadSelfAttention`, `TransformerBlock` (chapter 5's
# pre-norm block), the digits (`train_images`, `train_labels`, `test_images`,
# `test_labels`), `train_digits` and `evaluate_digits`: use them, but do not
# define anything else under these names. The names `expect_shape`,
# `expect_close` and `patchify_is` belong to the tests: do not define your own.
#
# **How it is graded.** The visible tests after each exercise check shapes and
# one worked example: a small input whose right answer the test states and
# computes on its own. Run them. Grading adds hidden tests to the cells marked
# *hidden tests*: agreement with an independent computation (loops over
# patches, nodes and neighbours, attention written out by hand) on random
# inputs and parameters, and properties checked on many random inputs with the
# `hypothesis` library: pooling does not depend on the order of the elements
# of a set nor on its padding, a graph layer mixes only neighbours and
# relabelling the nodes relabels its output. Exercise 2 is also graded by
# training your `ViT` with the given `train_digits` (seed 0) and measuring its
# accuracy on the test images: at least **0.80** is required (the reference
# and correct variants reach 0.90 or more on every seed tried; chance is 0.10).
# The tests of exercise 2 put their own correct `patchify` in place of yours,
# so a mistake in exercise 1 costs points only there. A test cell earns its
# points when it runs without an error; warnings cost nothing.
#
# **Tolerances.** Everything is PyTorch. The tests compare numbers entry by
# entry with a tolerance set by the dtype of your answer: about `1e-8` for
# float64 (the hidden tests use float64 inputs and parameters) and `1e-5` for
# float32.
#
# **Conventions.** A mask is boolean and **`True` means "may attend"** (or
# "is a real element", "is an edge"), as in
# `torch.nn.functional.scaled_dot_product_attention`; `nn.MultiheadAttention`'s
# `key_padding_mask` has the opposite polarity (`True` = ignore this key).
#
# The book refers to exercise N of this notebook as exercise 6.N. The whole
# notebook, training included, runs in about 10 seconds on one CPU core.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import contextlib
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def expect_shape(actual, shape, what):
    """Fail with a readable message unless `actual` has shape `shape`."""
    actual = tuple(np.shape(actual))
    assert actual == tuple(shape), f"{what} should have shape {tuple(shape)}, but it has shape {actual}."


def expect_close(actual, expected, what):
    """Fail with a readable message unless `actual` matches `expected` entry by entry.

    The tolerance (absolute and relative) follows the dtype of `actual`: 1e-5 for float32 (or narrower), 1e-8
    otherwise.
    """
    dtype = actual.dtype if torch.is_tensor(actual) or isinstance(actual, np.ndarray) else None
    low_precision = dtype in (torch.float32, torch.float16, torch.bfloat16, np.float32, np.float16)
    tolerance = 1e-5 if low_precision else 1e-8
    actual = np.asarray(actual.detach() if torch.is_tensor(actual) else actual, dtype=float)
    expected = np.asarray(expected.detach() if torch.is_tensor(expected) else expected, dtype=float)
    expect_shape(actual, expected.shape, what)
    nan = np.isnan(actual) & ~np.isnan(expected)
    if nan.any():
        idx = tuple(int(i) for i in np.argwhere(nan)[0])
        raise AssertionError(f"{what} contains NaN, first at index {idx}; expected {expected[idx]:.6g}.")
    bad = ~np.isclose(actual, expected, atol=tolerance, rtol=tolerance, equal_nan=True)
    if bad.any():
        # Name the entry that differs most, and by how much: two values printed alike can still differ by 1e-6.
        with np.errstate(invalid="ignore"):
            difference = np.where(bad, np.nan_to_num(np.abs(actual - expected), nan=np.inf), -1.0)
        idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(difference)), difference.shape))
        raise AssertionError(f"{what} is wrong: the largest difference is {difference[idx]:.3g}, at index {idx} "
                             f"(expected {expected[idx]:.10g}, got {actual[idx]:.10g}); {int(bad.sum())} of {bad.size} "
                             f"entries differ by more than the tolerance {tolerance:g}.")


class MultiHeadSelfAttention(nn.Module):
    """Chapter 3's multi-head self-attention, given: x (B, T, d_model) -> (output (B, T, d_model), weights (B, h, T, T)).

    Parameters as in chapter 3: `qkv`, an nn.Linear(d_model, 3 * d_model) whose output rows are the query, key and
    value projections in that order, and `out`, an nn.Linear(d_model, d_model). `mask` is (T, T) or (B, T, T) and
    True means "may attend"; a query that may attend to no key gets zero weights. The weights of the last call are
    also kept in `self.last_weights`, so that a model built from it can report them.
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
        output = torch.where(any_key, output.transpose(0, 1), self.out.bias)
        self.last_weights = weights
        return output, weights


class TransformerBlock(nn.Module):
    """Chapter 5's transformer block, given (pre-norm by default): x (B, T, d_model) -> (B, T, d_model).

    x <- x + attn(norm1(x)), then x <- x + ff(norm2(x)), with `attn` a MultiHeadSelfAttention (its weights of the
    last call in `attn.last_weights`), `norm1`, `norm2` two nn.LayerNorm(d_model) and `ff` =
    nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model)). No dropout.
    """

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


@contextlib.contextmanager
def patchify_is(function):
    """Within the with-statement, the name `patchify` means `function` (the tests of exercise 2 use it)."""
    namespace = globals()
    saved = namespace.get("patchify")
    namespace["patchify"] = function
    try:
        yield
    finally:
        namespace["patchify"] = saved


# %% [markdown] nbgrader={"grade": false, "grade_id": "patchify_md", "locked": true, "schema_version": 3, "solution": false}
# ## 1. Images as sequences of patches (2 points)
#
# A vision transformer reads an image as a sequence: it cuts the image into
# square patches of `p × p` pixels that do not overlap, flattens each patch
# into a vector, and treats the vectors as tokens.
#
# Write `patchify(images, patch_size)` for a batch `images` of shape
# `(B, C, H, W)` (channels first, as PyTorch stores images) with `H` and `W`
# divisible by `p = patch_size`. Return a tensor of shape
# `(B, (H/p)·(W/p), C·p·p)`:
#
# - the patches in **row-major order**: left to right along the top row of
#   patches, then the next row, and so on (patch `r·(W/p) + c` is the one in
#   row `r` and column `c` of the grid of patches);
# - each patch flattened in `(C, p, p)` order: all `p·p` pixels of channel 0
#   (row by row), then those of channel 1, and so on.
#
# Keep the dtype of `images`. Hint: `reshape` can split an axis of length `H`
# into two axes `(H/p, p)`, and `permute` can then bring the axes into the
# order you need; `reshape` (not `view`) copes with the result.

# %% nbgrader={"grade": false, "grade_id": "patchify", "locked": false, "schema_version": 3, "solution": true}
def patchify(images, patch_size):
    """Cut images (B, C, H, W) into patches (B, (H/p)(W/p), C p p): row-major patches, each in (C, p, p) order."""
    ### BEGIN SOLUTION
    batch, channels, height, width = images.shape
    p = patch_size
    if height % p or width % p:
        raise ValueError(f"the image size {height}x{width} is not divisible by the patch size {p}")
    grid = images.reshape(batch, channels, height // p, p, width // p, p)  # (B, C, rows, p, columns, p)
    patches = grid.permute(0, 2, 4, 1, 3, 5)  # (B, rows, columns, C, p, p): row-major patches, (C, p, p) inside
    return patches.reshape(batch, (height // p) * (width // p), channels * p * p)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_patchify", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Visible test: the shape and dtype, and a worked example on a 2-channel 4 x 4 image with pixels numbered 0 to 31.
# (Names in test cells start with _, so that they never clash with yours.)
expect_shape(patchify(torch.zeros(2, 3, 4, 6), 2), (2, 6, 12), "patchify of images (2, 3, 4, 6) with patch_size 2")
_image = torch.arange(32.0).reshape(1, 2, 4, 4)  # channel 0: row 0 is 0 1 2 3, row 1 is 4 5 6 7, ...; channel 1: 16..31
_patches = patchify(_image, 2)
assert _patches.dtype == torch.float32, f"patchify must keep the dtype of images (float32 here), not return {_patches.dtype}"
# Top left, top right, bottom left, bottom right; each patch channel 0 row by row, then channel 1 row by row.
_expected = [[0, 1, 4, 5, 16, 17, 20, 21], [2, 3, 6, 7, 18, 19, 22, 23],
             [8, 9, 12, 13, 24, 25, 28, 29], [10, 11, 14, 15, 26, 27, 30, 31]]
_hint = ""
if tuple(_patches.shape) == (1, 4, 8) and [int(v) for v in _patches[0, 0]] == [0, 16, 1, 17, 4, 20, 5, 21]:
    _hint = " (your first patch is 0, 16, 1, 17, ...: channels last, (p, p, C) order; (C, p, p) is asked for)"
expect_close(_patches[0], _expected, "patchify of the 2-channel 4 x 4 image 0..31 with patch_size 2 (patches in "
             f"row-major order, each flattened channel by channel, each channel row by row){_hint}")

# %% nbgrader={"grade": true, "grade_id": "test_patchify_order", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: the patches come in row-major order (left to right, then top to bottom), also for wide images.
### BEGIN HIDDEN TESTS
def _check_patch_order():
    for height, width, p in [(4, 6, 2), (6, 4, 2), (9, 6, 3), (8, 8, 4)]:
        rows, columns = height // p, width // p
        # Every pixel of the patch in grid row r and column c holds the number r * columns + c.
        numbers = torch.arange(rows * columns, dtype=torch.float64).reshape(rows, columns)
        image = numbers.repeat_interleave(p, dim=0).repeat_interleave(p, dim=1)[None, None]
        got = patchify(image, p)
        expect_shape(got, (1, rows * columns, p * p), f"patchify of a (1, 1, {height}, {width}) image with patch_size {p}")
        found = [int(v) for v in torch.as_tensor(got)[0, :, 0]]
        assert found == list(range(rows * columns)), (
            f"for a {height} x {width} image cut into a {rows} x {columns} grid of {p} x {p} patches, the patches come "
            f"in the order {found} of the grid (numbered row by row); expected 0, 1, 2, ...: row-major order, left to "
            "right along the top row first, not down the columns")


_check_patch_order()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_patchify_channels", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: each patch is flattened channel by channel, each channel row by row ((C, p, p) order).
### BEGIN HIDDEN TESTS
def _check_channel_order():
    for channels, p in [(3, 2), (2, 3)]:
        # One patch: pixel (c, i, j) holds 100 c + 10 i + j.
        image = (100 * torch.arange(channels)[:, None, None] + 10 * torch.arange(p)[:, None] + torch.arange(p))
        got = patchify(image[None].double(), p)
        expected = [100 * c + 10 * i + j for c in range(channels) for i in range(p) for j in range(p)]
        expect_shape(got, (1, 1, channels * p * p), f"patchify of a ({channels}, {p}, {p}) image with patch_size {p}")
        found = [int(v) for v in torch.as_tensor(got)[0, 0]]
        assert found == expected, (
            f"a {channels}-channel {p} x {p} patch whose pixel (channel c, row i, column j) holds 100c + 10i + j is "
            f"flattened to {found}, expected {expected}: all pixels of channel 0 first (row by row), then channel 1, "
            "... ((C, p, p) order, not channels last)")


_check_channel_order()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_patchify_oracle", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: agreement with a loop over the patches, on random batches of several shapes and dtypes.
### BEGIN HIDDEN TESTS
def _patches_by_loops(images, p):
    """The patches of images (B, C, H, W), cut one by one: (B, (H/p)(W/p), C p p), float64."""
    images = np.asarray(images, dtype=float)
    batch, channels, height, width = images.shape
    patches = [[images[b, :, r:r + p, c:c + p].reshape(-1) for r in range(0, height, p) for c in range(0, width, p)]
               for b in range(batch)]
    return np.array(patches).reshape(batch, (height // p) * (width // p), channels * p * p)


def _check_against_loops():
    rng = np.random.default_rng(61)
    for shape, p in [((2, 3, 4, 6), 2), ((1, 1, 8, 8), 4), ((3, 2, 6, 3), 3), ((2, 4, 5, 5), 1), ((1, 3, 4, 4), 4)]:
        images = rng.normal(size=shape)
        for dtype in (torch.float64, torch.float32):
            given = torch.from_numpy(images).to(dtype)
            got = patchify(given, p)
            assert torch.as_tensor(got).dtype == dtype, f"patchify must keep the dtype of images ({dtype}), not return {got.dtype}"
            expect_close(got, _patches_by_loops(given, p),
                         f"patchify of random images {shape} ({dtype}) with patch_size {p}, compared with cutting the "
                         "patches one by one")


_check_against_loops()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "vit_md", "locked": true, "schema_version": 3, "solution": false}
# ## 2. A vision transformer for handwritten digits (5 points)
#
# Build `ViT(image_size, patch_size, channels, num_classes, d_model, num_heads, num_layers)`
# for square images of `image_size × image_size` pixels, with
# `N = (image_size / patch_size)²` patches, and exactly these attributes:
#
# - `self.patch_embedding`: `nn.Linear(channels * patch_size ** 2, d_model)`,
#   the linear map applied to every flattened patch;
# - `self.cls_token`, an `nn.Parameter` of shape `(1, 1, d_model)`: the
#   learned *class token*;
# - `self.position_embedding`, an `nn.Parameter` of shape `(1, N + 1, d_model)`:
#   one learned position vector for the class token and one for each patch;
# - `self.blocks`, an `nn.ModuleList` of `num_layers` blocks
#   `TransformerBlock(d_model, num_heads, 4 * d_model)` (given above);
# - `self.norm`: `nn.LayerNorm(d_model)`, and `self.head`:
#   `nn.Linear(d_model, num_classes)`.
#
# Initialise `position_embedding` with small random numbers,
# `torch.randn(1, N + 1, d_model) * 0.02` (the scale of the ViT paper's code),
# and `cls_token` with zeros or the same kind of small random numbers; a
# truncated normal (`nn.init.trunc_normal_(..., std=0.02)`) is fine too. Keep
# PyTorch's default initialisation of the other modules.
#
# `forward(images, return_attention=False)` takes `images (B, channels, image_size, image_size)`:
#
# 1. cut them into patches in the order of exercise 1 and embed each patch
#    with `patch_embedding`: `(B, N, d_model)`;
# 2. put the class token **in front**, at index 0 (the sequence has `N + 1`
#    tokens), and add `position_embedding` to the whole sequence, the class
#    token included;
# 3. run the blocks in order, without a mask (every token may attend to every
#    token); after a block has run, its weights are in `block.attn.last_weights`;
# 4. the logits are `head(norm(x)[:, 0])`: the class token's output, normalised.
#
# Return the logits `(B, num_classes)` or, with `return_attention=True`,
# `(logits, attention)` where `attention` is a list with one tensor of weights
# `(B, num_heads, N + 1, N + 1)` per layer. No dropout.
#
# You may call your `patchify` (by that name, inside `forward`): the tests of
# this exercise put their own correct `patchify` in its place, so that
# exercises 1 and 2 are graded apart. (An `F.conv2d` with stride `patch_size`
# whose weight is `patch_embedding.weight` viewed as `(d_model, channels, p, p)`
# computes the same embeddings; the attribute must stay the `nn.Linear`.)

# %% nbgrader={"grade": false, "grade_id": "ViT", "locked": false, "schema_version": 3, "solution": true}
class ViT(nn.Module):
    """Vision transformer: images (B, C, H, W) -> logits (B, num_classes) [, list of (B, h, N+1, N+1) weights]."""

    def __init__(self, image_size, patch_size, channels, num_classes, d_model, num_heads, num_layers):
        super().__init__()
        ### BEGIN SOLUTION
        self.patch_size = patch_size
        num_patches = (image_size // patch_size) ** 2
        self.patch_embedding = nn.Linear(channels * patch_size ** 2, d_model)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d_model))
        self.position_embedding = nn.Parameter(torch.randn(1, num_patches + 1, d_model) * 0.02)
        self.blocks = nn.ModuleList([TransformerBlock(d_model, num_heads, 4 * d_model) for _ in range(num_layers)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, num_classes)
        ### END SOLUTION

    def forward(self, images, return_attention=False):
        ### BEGIN SOLUTION
        x = self.patch_embedding(patchify(images, self.patch_size))  # (B, N, d_model)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat([cls, x], dim=1) + self.position_embedding  # (B, N + 1, d_model), class token at 0
        attention = []
        for block in self.blocks:
            x = block(x)
            attention.append(block.attn.last_weights)
        logits = self.head(self.norm(x)[:, 0])
        return (logits, attention) if return_attention else logits
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_ViT", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: the parts and their shapes, the outputs' shapes, and a worked example of the class token's path.
# ViT is run here with a stand-in patchify (all-zero patches of the right shape), so this test checks ViT alone.
def _zero_patches(images, patch_size):
    batch, channels, height, width = images.shape
    return images.new_zeros(batch, (height // patch_size) * (width // patch_size), channels * patch_size ** 2)


torch.manual_seed(0)
with patchify_is(_zero_patches):
    _vit = ViT(image_size=8, patch_size=4, channels=3, num_classes=5, d_model=12, num_heads=3, num_layers=2)
    _images = torch.rand(4, 3, 8, 8)
    expect_shape(_vit(_images), (4, 5), "ViT's logits for images (4, 3, 8, 8) and 5 classes")
    _result = _vit(_images, return_attention=True)
_embedding = getattr(_vit, "patch_embedding", None)
assert isinstance(_embedding, nn.Linear), "ViT needs self.patch_embedding, an nn.Linear(channels * patch_size ** 2, d_model)"
expect_shape(_embedding.weight, (12, 48), "patch_embedding.weight (nn.Linear(3 * 4 * 4 = 48, d_model=12))")
for _name, _shape in [("cls_token", (1, 1, 12)), ("position_embedding", (1, 5, 12))]:
    assert isinstance(getattr(_vit, _name, None), nn.Parameter), f"ViT needs self.{_name}, an nn.Parameter of shape {_shape}"
    expect_shape(getattr(_vit, _name), _shape, f"{_name} (4 patches of 4 x 4 in an 8 x 8 image, plus the class token)")
_blocks = getattr(_vit, "blocks", None)
assert isinstance(_blocks, nn.ModuleList) and len(_blocks) == 2 and all(isinstance(b, TransformerBlock) for b in _blocks), (
    "ViT needs self.blocks = nn.ModuleList of num_layers (here 2) TransformerBlock(d_model, num_heads, 4 * d_model)")
expect_shape(_blocks[0].ff[0].weight, (48, 12), "blocks[0].ff[0].weight (d_ff = 4 * d_model = 48)")
assert all(bool(_block.norm_first) for _block in _blocks), (
    "ViT's blocks must be pre-norm, TransformerBlock(d_model, num_heads, 4 * d_model) with its default "
    "norm_first=True, as the ViT paper's blocks are; yours has norm_first=False")
assert isinstance(getattr(_vit, "norm", None), nn.LayerNorm), "ViT needs self.norm, an nn.LayerNorm(d_model)"
assert isinstance(getattr(_vit, "head", None), nn.Linear), "ViT needs self.head, an nn.Linear(d_model, num_classes)"
expect_shape(_vit.head.weight, (5, 12), "head.weight (nn.Linear(d_model=12, num_classes=5))")
assert isinstance(_result, tuple) and len(_result) == 2, "with return_attention=True, ViT returns (logits, attention)"
assert len(_result[1]) == 2, f"attention must hold one tensor per layer (2 layers), not {len(_result[1])}"
for _layer, _weights in enumerate(_result[1]):
    expect_shape(_weights, (4, 3, 5, 5), f"the attention weights of layer {_layer} (batch, heads, N + 1, N + 1)")


# Worked example: d_model = 4, one block made the identity (its attention output and feed-forward output are set to
# zero), cls_token = (2, 0, 1, 0) and position 0 = (1, 1, 0, -1). The class token's output is then
# norm(cls_token + position 0) = norm((3, 1, 1, -1)) = (2, 0, 0, -2) / sqrt(2) for every image; the head below reads
# its first and last feature, so the logits are about (1.414, -1.414, 0.5). The other positions are large: a
# sequence whose index 0 is not the class token, or a class token without position 0, gives other logits.
def _layer_norm(rows):
    """LayerNorm without its gain and bias (eps = 1e-5, PyTorch's default), row by row."""
    rows = np.asarray(rows, dtype=float)
    centred = rows - rows.mean(-1, keepdims=True)
    return centred / np.sqrt((centred ** 2).mean(-1, keepdims=True) + 1e-5)


_head_weight = np.array([[1.0, 0, 0, 0], [0, 0, 0, 1.0], [0, 0, 0, 0]])
_expected = _head_weight @ _layer_norm([3.0, 1.0, 1.0, -1.0]) + np.array([0, 0, 0.5])
torch.manual_seed(0)
with patchify_is(_zero_patches):
    _vit = ViT(image_size=4, patch_size=2, channels=1, num_classes=3, d_model=4, num_heads=1, num_layers=1).double()
    with torch.no_grad():
        for _part in (_vit.blocks[0].attn.out, _vit.blocks[0].ff[2]):  # the block adds zero: it is the identity
            _part.weight.zero_()
            _part.bias.zero_()
        _vit.cls_token.copy_(torch.tensor([[[2.0, 0.0, 1.0, 0.0]]]))
        _vit.position_embedding.copy_(torch.tensor([[1.0, 1.0, 0.0, -1.0]] + [[5.0, -3.0, 7.0, 0.0]] * 4)[None])
        _vit.head.weight.copy_(torch.tensor(_head_weight))
        _vit.head.bias.copy_(torch.tensor([0.0, 0.0, 0.5]))
        _logits = _vit(torch.rand(2, 1, 4, 4, dtype=torch.float64))
expect_close(_logits, np.stack([_expected, _expected]), "the logits of the worked example (identity block, class token "
             "(2, 0, 1, 0) at index 0 plus position 0 (1, 1, 0, -1), head reading features 0 and 3; expected about "
             "(1.414, -1.414, 0.5) for every image)")

# %% nbgrader={"grade": true, "grade_id": "test_ViT_oracle", "locked": true, "points": 1.5, "schema_version": 3, "solution": false}
# Hidden tests: agreement with a forward pass written out by hand, random parameters, several shapes, float64.
# Written out: patches, embedding, class token at index 0, positions, blocks, norm, head. With the tests' own patchify.
# Each block is written out in its own order (norm_first), and logits measured not to depend on the positions (or on
# the final norm) are compared with the pass without them: test_ViT charges those mistakes, so they cost one cell.
### BEGIN HIDDEN TESTS
def _unfold_patches(images, patch_size):
    """The tests' own patchify: torch's unfold gives the same patches, in the same order."""
    return F.unfold(images, patch_size, stride=patch_size).transpose(1, 2)


def _attention_by_hand(attn, y):
    """Multi-head self-attention without a mask, from its parameters: (output (B, T, d), weights (B, h, T, T))."""
    batch, length, d_model = y.shape
    heads = attn.num_heads
    width = d_model // heads
    q, k, v = (y @ attn.qkv.weight.T + attn.qkv.bias).split(d_model, dim=-1)
    q, k, v = (t.reshape(batch, length, heads, width).transpose(1, 2) for t in (q, k, v))
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(width), dim=-1)
    mixed = (weights @ v).transpose(1, 2).reshape(batch, length, d_model)
    return mixed @ attn.out.weight.T + attn.out.bias, weights


def _block_by_hand(block, x, norm_first=True):
    """One TransformerBlock (pre-norm unless told) from its parameters: (x after the block, weights (B, h, T, T))."""
    def norm(layer, t):
        return F.layer_norm(t, (t.shape[-1],), layer.weight, layer.bias, 1e-5)

    def ff(t):
        return F.gelu(t @ block.ff[0].weight.T + block.ff[0].bias) @ block.ff[2].weight.T + block.ff[2].bias

    if not norm_first:  # only to name the mistake in a hint: the original Transformer's post-norm order
        mixed, weights = _attention_by_hand(block.attn, x)
        x = norm(block.norm1, x + mixed)
        return norm(block.norm2, x + ff(x)), weights
    mixed, weights = _attention_by_hand(block.attn, norm(block.norm1, x))
    x = x + mixed
    return x + ff(norm(block.norm2, x)), weights


def _vit_by_hand(vit, images, patch_size, variant="right"):
    """ViT's forward pass from its parameters: (logits, list of weights). `variant` names a mistake, for hints.

    Each block is written out in the order its norm_first says: whether the blocks are pre-norm is test_ViT's
    check (one mistake, one cell), and this pass checks what ViT does around them."""
    d_model = vit.cls_token.shape[-1]
    tokens = _unfold_patches(images, patch_size) @ vit.patch_embedding.weight.T + vit.patch_embedding.bias
    cls = vit.cls_token.expand(len(images), 1, d_model)
    positions = vit.position_embedding
    if variant == "class token without position":
        x = torch.cat([cls, tokens + positions[:, 1:]], dim=1)
    elif variant == "class token last":
        x = torch.cat([tokens, cls], dim=1) + positions
    elif variant == "no positions":
        x = torch.cat([cls, tokens], dim=1)
    else:
        x = torch.cat([cls, tokens], dim=1) + positions
    attention = []
    for block in vit.blocks:
        x, weights = _block_by_hand(block, x, norm_first=bool(getattr(block, "norm_first", True)))
        attention.append(weights)
    if variant != "no final norm":
        x = F.layer_norm(x, (d_model,), vit.norm.weight, vit.norm.bias, 1e-5)
    pooled = {"mean of all tokens": x.mean(dim=1), "class token last": x[:, -1]}.get(variant, x[:, 0])
    return pooled @ vit.head.weight.T + vit.head.bias, attention


_VIT_SHAPES = [  # (image_size, patch_size, channels, num_classes, d_model, num_heads, num_layers, batch)
    (8, 4, 1, 10, 8, 2, 2, 3), (6, 2, 3, 4, 12, 3, 3, 2), (4, 1, 2, 3, 6, 1, 1, 2)]


def _random_vit(image_size, patch_size, channels, num_classes, d_model, num_heads, num_layers, seed):
    """Your ViT, float64, with every parameter drawn at random (LayerNorm gains near 1)."""
    torch.manual_seed(seed)
    vit = ViT(image_size, patch_size, channels, num_classes, d_model, num_heads, num_layers).double()
    with torch.no_grad():
        for name, parameter in vit.named_parameters():
            parameter.copy_(torch.randn_like(parameter) * 0.5)
            if "norm" in name and name.endswith("weight"):
                parameter.add_(1.0)
    return vit


def _ignores(vit, images, parameter, rows=slice(None)):
    """Whether vit's logits stay the same when `parameter[rows]` changes (measured, not read from the code)."""
    with torch.no_grad(), patchify_is(_unfold_patches):
        before = torch.as_tensor(vit(images)).double()
        kept = parameter.detach().clone()
        moved = kept.clone()
        moved[rows] += torch.linspace(1.0, 2.0, kept.shape[-1], dtype=kept.dtype)
        parameter.copy_(moved)
        try:
            after = torch.as_tensor(vit(images)).double()
        finally:
            parameter.copy_(kept)
    return tuple(before.shape) == tuple(after.shape) and bool(torch.allclose(before, after, atol=1e-12))


def _same(got, expected):
    got = torch.as_tensor(got)
    return tuple(got.shape) == tuple(expected.shape) and bool(torch.allclose(got.double(), expected, atol=1e-6))


def _check_vit_against_hand():
    for shape in _VIT_SHAPES:
        image_size, patch_size, channels, num_classes, d_model, num_heads, num_layers, batch = shape
        with patchify_is(_unfold_patches):
            vit = _random_vit(*shape[:-1], seed=sum(shape))
            images = torch.rand(batch, channels, image_size, image_size, dtype=torch.float64)
            with torch.no_grad():
                got = vit(images)
        # One mistake, one cell: positions that never reach the class token (or no token at all) and a final norm
        # never applied are test_ViT's to charge (its worked example adds position 0 to the class token and reads
        # head(norm(x)[:, 0])). Where the logits are measured not to depend on those parameters, they are compared
        # with the pass that leaves them out.
        if _ignores(vit, images, vit.position_embedding):
            missing = "no positions"
        elif _ignores(vit, images, vit.position_embedding, (slice(None), 0)):
            missing = "class token without position"
        elif _ignores(vit, images, vit.norm.weight):
            missing = "no final norm"
        else:
            missing = None
        with torch.no_grad():
            if missing and _same(got, _vit_by_hand(vit, images, patch_size, missing)[0]):
                print(f"Your ViT's logits are those of a ViT with {missing} (see steps 2 and 4 of the instructions), which "
                      "test_ViT's worked example charges; apart from that, they agree with the forward pass written "
                      "out by hand.")
                continue
            expected, _ = _vit_by_hand(vit, images, patch_size)
            hint = ""
            for variant, step in [("class token without position", "step 2"), ("no positions", "step 2"),
                                  ("class token last", "steps 2 and 4"), ("mean of all tokens", "step 4"),
                                  ("no final norm", "step 4")]:
                if _same(got, _vit_by_hand(vit, images, patch_size, variant)[0]):
                    hint = f" (your logits are those of a ViT with {variant}: see {step} of the instructions)"
        expect_close(got, expected, f"ViT's logits for image_size={image_size}, patch_size={patch_size}, "
                     f"channels={channels}, d_model={d_model}, {num_heads} head(s), {num_layers} layer(s), with random "
                     "parameters, compared with the forward pass written out by hand (class token at index 0, "
                     f"position embedding added to every token, class token included, logits head(norm(x)[:, 0])){hint}")


_check_vit_against_hand()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_ViT_attention", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: with return_attention=True, the list holds each layer's weights, in layer order: the weights each
# block's attention computed on the input it received (read with forward pre-hooks). Whatever your ViT feeds the
# blocks is checked by test_ViT_oracle; this cell checks only what is returned, so a mistake costs points once.
### BEGIN HIDDEN TESTS
def _inputs_of_attention(vit, images):
    """Run vit(images, return_attention=True) with a forward pre-hook on each block's attn: (result, the input each
    attn received on its last call, or None where it was not called)."""
    attentions = [block.attn for block in vit.blocks]
    received = {}

    def keep(i, args, kwargs):
        x = args[0] if args else next(iter(kwargs.values()), None)  # called with x positional or by keyword
        if torch.is_tensor(x):
            received[i] = x.detach().clone()  # the last call's input: the one attn.last_weights comes from

    handles = [attn.register_forward_pre_hook(lambda module, args, kwargs, i=i: keep(i, args, kwargs), with_kwargs=True)
               for i, attn in enumerate(attentions)]
    try:
        with torch.no_grad():
            result = vit(images, return_attention=True)
    finally:
        for handle in handles:
            handle.remove()
    return result, [received.get(i) for i in range(len(attentions))]


def _check_vit_attention():
    for shape in _VIT_SHAPES[:2]:
        image_size, patch_size, channels, num_classes, d_model, num_heads, num_layers, batch = shape
        with patchify_is(_unfold_patches):
            vit = _random_vit(*shape[:-1], seed=sum(shape))
            images = torch.rand(batch, channels, image_size, image_size, dtype=torch.float64)
            result, inputs = _inputs_of_attention(vit, images)
        assert isinstance(result, tuple) and len(result) == 2, "with return_attention=True, ViT returns (logits, attention)"
        assert len(result[1]) == num_layers, (
            f"attention must hold one tensor of weights per layer ({num_layers}), not {len(result[1])}")
        for layer, (got, x) in enumerate(zip(result[1], inputs)):
            assert x is not None, (f"block {layer}'s attention (blocks[{layer}].attn) was not called during the forward "
                                   "pass: run every block in order (step 3)")
            with torch.no_grad():
                _, weights = _attention_by_hand(vit.blocks[layer].attn, x.double())
            expect_close(torch.as_tensor(got), weights, f"the attention weights of layer {layer} (of {num_layers}) "
                         f"for image_size={image_size}, patch_size={patch_size}, {num_heads} head(s), compared with the "
                         f"weights blocks[{layer}].attn computed on the input it received (return each block's "
                         "attn.last_weights, read after that block has run, in layer order)")


_check_vit_attention()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "digits_md", "locked": true, "schema_version": 3, "solution": false}
# ### Train it on handwritten digits
#
# The cell below loads scikit-learn's handwritten digits (1,797 grey images of
# 8 × 8 pixels, values 0 to 16, shipped with scikit-learn: nothing is
# downloaded), scales them to `[0, 1]` and splits them once and for all: the
# images whose index is a multiple of 5 are the test set (360 images), the
# other 1,437 the training set. `train_digits(model)` trains a model for 6
# epochs with AdamW (batches of 64, learning rate `3e-3`, one CPU thread,
# about 2 seconds for the ViT below); `evaluate_digits(model)` returns its
# accuracy on the test images. The grader trains a
# `ViT(image_size=8, patch_size=4, channels=1, num_classes=10, d_model=32, num_heads=4, num_layers=2)`
# built after `torch.manual_seed(0)` in the same way, with its own correct
# `patchify`, and expects a test accuracy of at least **0.80**.

# %% nbgrader={"grade": false, "grade_id": "digits_setup", "locked": true, "schema_version": 3, "solution": false}
from sklearn.datasets import load_digits

_digits = load_digits()
_is_test = np.arange(len(_digits.target)) % 5 == 0  # a fixed split: every fifth image is a test image
train_images = torch.tensor(_digits.images[~_is_test] / 16.0, dtype=torch.float32)[:, None]  # (1437, 1, 8, 8)
train_labels = torch.tensor(_digits.target[~_is_test])  # (1437,) long, digits 0-9
test_images = torch.tensor(_digits.images[_is_test] / 16.0, dtype=torch.float32)[:, None]  # (360, 1, 8, 8)
test_labels = torch.tensor(_digits.target[_is_test])  # (360,)


def train_digits(model, epochs=6, batch_size=64, lr=3e-3, seed=0):
    """Train `model` (images (B, 1, 8, 8) -> logits (B, 10)) on the training digits; returns the loss of every step.

    AdamW without weight decay, cross-entropy, the training images shuffled by a generator seeded with `seed`.
    """
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model.train()
    losses = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a model this small trains fastest on one thread
    try:
        for _ in range(epochs):
            order = torch.randperm(len(train_labels), generator=generator)
            for start in range(0, len(order), batch_size):
                batch = order[start:start + batch_size]
                loss = F.cross_entropy(model(train_images[batch]), train_labels[batch])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
    finally:
        torch.set_num_threads(threads)
    return losses


@torch.no_grad()
def evaluate_digits(model):
    """The accuracy of `model` on the 360 test images (a float in [0, 1])."""
    model.eval()
    predictions = model(test_images).argmax(dim=-1)
    model.train()
    return (predictions == test_labels).double().mean().item()


# %% nbgrader={"grade": false, "grade_id": "training_run", "locked": true, "schema_version": 3, "solution": false}
# Train your ViT (with your patchify) for about 2 seconds, as the grader does with its own patchify.
torch.manual_seed(0)
digits_model = ViT(image_size=8, patch_size=4, channels=1, num_classes=10, d_model=32, num_heads=4, num_layers=2)
digits_losses = train_digits(digits_model)
digits_accuracy = evaluate_digits(digits_model)
print(f"training loss {digits_losses[0]:.2f} -> {digits_losses[-1]:.3f}; test accuracy {digits_accuracy:.3f}")

# %% nbgrader={"grade": true, "grade_id": "test_ViT_training", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden test: trained with train_digits (seed 0), the ViT classifies at least 80% of the test digits correctly.
# With the tests' own patchify; the threshold is calibrated by benchmarks/calibrate_06_vit.py.
### BEGIN HIDDEN TESTS
def _check_vit_training():
    torch.manual_seed(0)
    with patchify_is(_unfold_patches):
        trained = ViT(image_size=8, patch_size=4, channels=1, num_classes=10, d_model=32, num_heads=4, num_layers=2)
        losses = train_digits(trained)
        accuracy = evaluate_digits(trained)
    assert accuracy >= 0.80, (
        f"after training with train_digits, your ViT classifies {accuracy:.1%} of the test digits correctly (training "
        f"loss {losses[0]:.2f} -> {losses[-1]:.2f}); at least 80% is expected (the reference gets 90% or more on every "
        "seed tried). Check the class token and the positions (step 2), that every block runs (step 3), and that the "
        "logits are read from the class token (step 4); initialise cls_token and position_embedding small (std 0.02).")


_check_vit_training()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "rollout_md", "locked": true, "schema_version": 3, "solution": false}
# ## 3. Attention rollout (3 points)
#
# A layer's attention weights say where each token looks in the layer's
# *input*, but after the first layer that input is already a mixture of
# tokens. Attention rollout (Abnar & Zuidema, 2020) follows the mixing through
# all layers. For layer $\ell$ with weights $A_\ell$ of shape `(B, H, T, T)`:
#
# 1. average the weights over the heads: $\bar A_\ell$, `(B, T, T)`;
# 2. account for the residual connection: $\tilde A_\ell = 0.5\,\bar A_\ell + 0.5\,I$;
# 3. renormalise every row of $\tilde A_\ell$ to sum to 1 (the weights you are
#    given need not sum to 1: a fully masked query has a row of zeros);
# 4. multiply the layers, the last one on the left:
#    $R = \tilde A_L \cdots \tilde A_2 \tilde A_1$.
#
# Write `attention_rollout(attention)` for a list of `L ≥ 1` tensors of
# weights `(B, H, T, T)`, one per layer in order (as your ViT returns them),
# that returns `R`, `(B, T, T)`. Row `i` of `R` says how much each input token
# contributes to token `i` after the last layer; row 0 of a ViT is its class
# token.
#
# What is graded about the dtype: only the precision of the numbers, judged by
# the dtype you return. The hidden tests pass float64 weights; a float64 result
# must match to about `1e-8`, a float32 one to about `1e-5`. So keeping the
# dtype of the weights (an identity made with `dtype=weights.dtype`) and
# computing in float32 and returning float32 both earn every point; computing
# in float32 and casting the result back to float64 does not (float32 is
# accurate to about `1e-7` only).

# %% nbgrader={"grade": false, "grade_id": "attention_rollout", "locked": false, "schema_version": 3, "solution": true}
def attention_rollout(attention):
    """Attention rollout of a list of L weights (B, H, T, T), first layer first -> (B, T, T)."""
    ### BEGIN SOLUTION
    rollout = None
    for weights in attention:
        weights = torch.as_tensor(weights)
        identity = torch.eye(weights.shape[-1], dtype=weights.dtype, device=weights.device)
        mixed = 0.5 * weights.mean(dim=1) + 0.5 * identity  # (B, T, T): heads averaged, the residual added
        mixed = mixed / mixed.sum(dim=-1, keepdim=True)  # each row sums to at least 0.5 before this
        rollout = mixed if rollout is None else mixed @ rollout  # the later layer on the left
    return rollout
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_attention_rollout", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: the shape, and a worked example with two layers of two heads and two tokens.
_weights = [torch.softmax(torch.randn(3, 4, 5, 5), dim=-1) for _ in range(2)]
expect_shape(attention_rollout(_weights), (3, 5, 5), "the rollout of 2 layers of weights (3, 4, 5, 5)")
# Layer 1: head 0 looks at token 0, head 1 at token 1, so the mean is 1/2 everywhere and
# 0.5 * mean + 0.5 * I = [[0.75, 0.25], [0.25, 0.75]]. Layer 2: both heads look at token 0, mean [[1, 0], [1, 0]],
# so 0.5 * mean + 0.5 * I = [[1, 0], [0.5, 0.5]]. Rollout = layer 2 @ layer 1 = [[0.75, 0.25], [0.5, 0.5]].
_layer1 = torch.tensor([[[[1.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [0.0, 1.0]]]])  # (B=1, H=2, T=2, T=2)
_layer2 = torch.tensor([[[[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]]]])
expect_close(attention_rollout([_layer1, _layer2])[0], [[0.75, 0.25], [0.5, 0.5]],
             "the rollout of the worked example (expected [[0.75, 0.25], [0.5, 0.5]]: heads averaged, 0.5 * A + 0.5 * I, "
             "the last layer on the left)")
# Worked example with rows that do not sum to 1: one layer, one head, three tokens. Query 0 was fully masked (a row of
# zeros) and query 1's weights sum to 0.5, so 0.5 * A + 0.5 * I = [[0.5, 0, 0], [0.25, 0.5, 0], [0, 0.5, 0.5]];
# renormalising each row to sum to 1 gives [[1, 0, 0], [1/3, 2/3, 0], [0, 0.5, 0.5]].
_masked = torch.tensor([[[[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 1.0, 0.0]]]])  # (B=1, H=1, T=3, T=3)
_rollout = torch.as_tensor(attention_rollout([_masked])).detach()
_hint = ""
if tuple(_rollout.shape) == (1, 3, 3) and torch.allclose(_rollout[0, 0].float(), torch.tensor([0.5, 0.0, 0.0])):
    _hint = " (your row 0 sums to 0.5: renormalise every row of 0.5 * A + 0.5 * I to sum to 1, step 3)"
expect_close(_rollout[0], [[1.0, 0.0, 0.0], [1 / 3, 2 / 3, 0.0], [0.0, 0.5, 0.5]],
             "the rollout of one layer whose row 0 is all zeros (a fully masked query) and whose row 1 sums to 0.5 "
             f"(expected [[1, 0, 0], [1/3, 2/3, 0], [0, 0.5, 0.5]]: each row of 0.5 * A + 0.5 * I renormalised){_hint}")

# %% nbgrader={"grade": true, "grade_id": "test_attention_rollout_oracle", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: agreement with a loop over layers, on random weights of one to four layers, float64.
### BEGIN HIDDEN TESTS
def _rollout_by_loops(attention):
    """Rollout in NumPy, one item of the batch at a time: mean over heads, 0.5 A + 0.5 I, rows to 1, last on the left."""
    attention = [np.asarray(torch.as_tensor(w).detach(), dtype=float) for w in attention]
    batch, _, length, _ = attention[0].shape
    result = np.zeros((batch, length, length))
    for b in range(batch):
        rollout = np.eye(length)
        for weights in attention:
            mixed = 0.5 * weights[b].mean(axis=0) + 0.5 * np.eye(length)
            mixed = mixed / mixed.sum(axis=1, keepdims=True)
            rollout = mixed @ rollout
        result[b] = rollout
    return result


def _random_weights(rng, batch, heads, length):
    scores = rng.normal(size=(batch, heads, length, length)) * 2
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return torch.from_numpy(weights / weights.sum(-1, keepdims=True))


def _precision_hint(got, expected):
    """A hint when a float64 result is off by float32's rounding only (computed in float32, cast back to float64)."""
    got = torch.as_tensor(got).detach()
    if got.dtype != torch.float64 or tuple(got.shape) != tuple(np.shape(expected)):
        return ""
    largest = float(np.abs(got.numpy() - np.asarray(expected)).max())
    if 1e-8 < largest < 1e-5:
        return (f" (off by {largest:.2g} at most, float32's rounding: a float64 result is compared at about 1e-8, so "
                "compute in float64, or return the float32 result, which is compared at float32's precision)")
    return ""


def _check_rollout_against_loops():
    rng = np.random.default_rng(63)
    for layers, batch, heads, length in [(1, 2, 3, 4), (2, 1, 1, 5), (3, 3, 2, 6), (4, 2, 4, 3)]:
        attention = [_random_weights(rng, batch, heads, length) for _ in range(layers)]
        got, expected = attention_rollout(attention), _rollout_by_loops(attention)
        expect_close(got, expected, f"the rollout of {layers} layer(s) of random weights ({batch}, {heads}, {length}, "
                     f"{length}), compared with a loop over the layers{_precision_hint(got, expected)}")


_check_rollout_against_loops()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_attention_rollout_renormalised", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests (hypothesis): rows of the input that do not sum to 1 (all-zero rows of masked queries) are renormalised.
# Every row of the rollout then sums to 1.
### BEGIN HIDDEN TESTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@settings(max_examples=25, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck),
          report_multiple_bugs=False)  # one failure, the simplest: its message names the mistake
@given(st.integers(1, 3), st.integers(1, 3), st.integers(2, 6), st.floats(0.0, 0.9), st.integers(0, 10_000))
def _check_renormalised(layers, heads, length, zero_share, seed):
    rng = np.random.default_rng(seed)
    attention = []
    for _ in range(layers):
        weights = _random_weights(rng, 2, heads, length).numpy()
        weights *= rng.uniform(0.2, 1.0, size=(2, heads, length, 1))  # rows summing to less than 1
        masked = rng.random(size=(2, 1, length, 1)) < zero_share  # fully masked queries: all-zero rows
        weights = np.where(masked, 0.0, weights)
        attention.append(torch.from_numpy(weights))
    rollout = torch.as_tensor(attention_rollout(attention)).detach()
    sums = rollout.sum(dim=-1)
    tolerance = 1e-5 if rollout.dtype in (torch.float32, torch.float16, torch.bfloat16) else 1e-8  # as stated
    assert torch.allclose(sums, torch.ones_like(sums), atol=tolerance), (
        f"with input rows that do not sum to 1 (all-zero rows of masked queries, rows scaled down), the rollout's rows "
        f"sum to {np.round(sums.numpy().ravel(), 4).tolist()[:8]}, not 1: renormalise every row of 0.5 * A + 0.5 * I "
        "to sum to 1 in each layer, before multiplying")
    expected = _rollout_by_loops(attention)
    expect_close(rollout, expected, f"the rollout of {layers} layer(s) whose rows do not sum to 1"
                 f"{_precision_hint(rollout, expected)}")


_check_renormalised()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_attention_rollout_order", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: the layers are multiplied with the last layer on the left (R = A_L ... A_2 A_1).
### BEGIN HIDDEN TESTS
def _check_rollout_order():
    # Three tokens, one head: layer 1 copies token 1 into token 0, layer 2 copies token 2 into token 1.
    first = torch.tensor([[[[0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]]], dtype=torch.float64)
    second = torch.tensor([[[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]]], dtype=torch.float64)
    got = torch.as_tensor(attention_rollout([first, second])).detach()
    expected = _rollout_by_loops([first, second])
    reversed_order = _rollout_by_loops([second, first])
    hint = ""
    if tuple(got.shape) == expected.shape and np.allclose(got.numpy(), reversed_order, atol=1e-8):
        hint = " (yours is A_1 A_2: the first layer on the left)"
    expect_close(got, expected, "the rollout of two layers, layer 1 moving token 1 into token 0 and layer 2 token 2 "
                 f"into token 1; R = A_2 A_1, the last layer on the left, so token 0 gets a share of token 2{hint}")


_check_rollout_order()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "pooling_md", "locked": true, "schema_version": 3, "solution": false}
# ## 4. Pooling a set by attention (4 points)
#
# A set has no order: `{3, 1, 2}` is `{1, 2, 3}`. Self-attention without
# positions treats its input as a set (permuting the tokens permutes the
# output), and *pooling by attention* summarises a set in a fixed number of
# vectors whatever its size: `k` learned *seed* vectors are the queries, the
# elements of the set the keys and values (Lee et al., 2019, "pooling by
# multi-head attention"; the Set Transformer adds a residual connection,
# LayerNorm and a feed-forward layer, left out here).
#
# Build `AttentionPooling(d_model, num_heads, num_seeds=1)` with exactly
# these attributes:
#
# - `self.seeds`, an `nn.Parameter` of shape `(1, num_seeds, d_model)` (any
#   small random initialisation);
# - `self.attn`: `nn.MultiheadAttention(d_model, num_heads, batch_first=True)`.
#
# `forward(x, present=None)` takes a batch of sets `x (B, n, d_model)`, padded
# to the same size `n`, and `present (B, n)` bool, `True` for a real element
# and `False` for padding (`None`: every element is real). It returns the
# output of `self.attn` with the seeds as queries and `x` as keys and values,
# padding ignored: `(B, num_seeds, d_model)`. `nn.MultiheadAttention`'s
# `key_padding_mask` is `True` where a key must be *ignored*, the opposite of
# `present`.
#
# A set with no real element at all gets zeros. `nn.MultiheadAttention` does
# not give them: for a query whose keys are all ignored, softmax over no keys
# is 0 / 0, and on the PyTorch this course uses the output is then nan with
# `need_weights=True` (the default), but `out_proj`'s bias with
# `need_weights=False` (that path gives such a query zero weights, so only the
# output projection's bias is left). `torch.nan_to_num` cleans the first case
# only; setting the output of every empty set to zeros yourself (for instance
# with `torch.where` on `present.any(dim=1)`) works with both.
#
# The result must not depend on the order of the elements nor on the padding:
# how many padding slots there are, where they are and what they hold.

# %% nbgrader={"grade": false, "grade_id": "AttentionPooling", "locked": false, "schema_version": 3, "solution": true}
class AttentionPooling(nn.Module):
    """Pooling by multi-head attention: sets x (B, n, d_model), present (B, n) bool -> (B, num_seeds, d_model)."""

    def __init__(self, d_model, num_heads, num_seeds=1):
        super().__init__()
        ### BEGIN SOLUTION
        self.seeds = nn.Parameter(torch.randn(1, num_seeds, d_model) / math.sqrt(d_model))
        self.attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True)
        ### END SOLUTION

    def forward(self, x, present=None):
        ### BEGIN SOLUTION
        seeds = self.seeds.expand(x.shape[0], -1, -1)
        if present is None:
            return self.attn(seeds, x, x, need_weights=False)[0]
        present = torch.as_tensor(present, dtype=torch.bool, device=x.device)
        nonempty = present.any(dim=-1)  # (B,)
        # An empty set would give softmax over no keys (nan): let it see its padding, then replace its output by zeros.
        ignore = ~(present | ~nonempty[:, None])
        pooled = self.attn(seeds, x, x, key_padding_mask=ignore, need_weights=False)[0]
        return torch.where(nonempty[:, None, None], pooled, torch.zeros_like(pooled))
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_AttentionPooling", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: the parts and the output's shape, and a worked example where every seed attends uniformly.
torch.manual_seed(0)
_pool = AttentionPooling(8, 2, num_seeds=3)
assert isinstance(getattr(_pool, "seeds", None), nn.Parameter), "AttentionPooling needs self.seeds, an nn.Parameter"
expect_shape(_pool.seeds, (1, 3, 8), "seeds (1, num_seeds=3, d_model=8)")
_attn = getattr(_pool, "attn", None)
assert isinstance(_attn, nn.MultiheadAttention) and _attn.embed_dim == 8 and _attn.num_heads == 2 and _attn.batch_first, (
    "AttentionPooling needs self.attn, an nn.MultiheadAttention(d_model, num_heads, batch_first=True)")
expect_shape(_pool(torch.randn(4, 5, 8)), (4, 3, 8), "the output for sets x (4, 5, 8) and 3 seeds")
expect_shape(_pool(torch.randn(4, 5, 8), torch.rand(4, 5) < 0.7), (4, 3, 8), "the output for x (4, 5, 8) with `present`")

# Worked example: d_model = 2, one head, one seed. The query and key projections are zero, so every score is 0 and
# the seed attends uniformly to the real elements; the value and output projections are the identity, the output
# projection's bias is (0.5, -0.5), the other biases 0. Three sets padded to 4 slots (padding holds large values):
# set 0 has the real elements (1, 2), (3, 4), (5, 9): their mean (3, 5) plus the bias, (3.5, 4.5);
# set 1 has no real element: zeros (not nan, and not the bias);
# set 2 has one real element, (7, 1), in slot 2: (7.5, 0.5).
torch.manual_seed(0)
_pool = AttentionPooling(2, 1).double()
with torch.no_grad():
    _pool.attn.in_proj_weight.zero_()
    _pool.attn.in_proj_weight[4:] = torch.eye(2)  # rows 4-5: the value projection
    _pool.attn.in_proj_bias.zero_()
    _pool.attn.out_proj.weight.copy_(torch.eye(2))
    _pool.attn.out_proj.bias.copy_(torch.tensor([0.5, -0.5]))
    _x = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [5.0, 9.0], [100.0, -100.0]],
                       [[40.0, 40.0], [-60.0, 20.0], [80.0, 10.0], [30.0, 30.0]],
                       [[50.0, 50.0], [-50.0, 50.0], [7.0, 1.0], [90.0, -90.0]]], dtype=torch.float64)
    _present = torch.tensor([[True, True, True, False], [False, False, False, False], [False, False, True, False]])
    _pooled = torch.as_tensor(_pool(_x, _present)).detach()
expect_shape(_pooled, (3, 1, 2), "the pooled sets of the worked example (3 sets, 1 seed, d_model 2)")
_hint = ""
if torch.allclose(_pooled[0, 0].float(), torch.tensor([100.5, -100.5])):
    _hint = (" (set 0 pools its padding slot only: key_padding_mask is True where a key is ignored, so pass ~present, "
             "not present)")
elif torch.allclose(_pooled[0, 0].float(), torch.tensor([27.75, -21.75])):
    _hint = " (set 0 pools its padding slot too: pass key_padding_mask=~present to self.attn)"
elif torch.isnan(_pooled[1]).any():
    _hint = " (the empty set 1 gives nan: see the instructions on sets with no real element)"
elif torch.allclose(_pooled[1, 0].float(), torch.tensor([0.5, -0.5])):
    _hint = (" (the empty set 1 gives out_proj's bias (0.5, -0.5), which nn.MultiheadAttention returns with "
             "need_weights=False for a query with no key: nan_to_num does not catch it; return zeros for such a set)")
expect_close(_pooled, [[[3.5, 4.5]], [[0.0, 0.0]], [[7.5, 0.5]]],
             "the pooled sets of the worked example (uniform attention over each set's real elements, values and output "
             "projection the identity, output bias (0.5, -0.5): set 0 (3.5, 4.5), the empty set 1 zeros, set 2 "
             f"(7.5, 0.5)){_hint}")

# %% nbgrader={"grade": true, "grade_id": "test_AttentionPooling_oracle", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: agreement with multi-head attention written out by hand, random parameters, several seeds and heads.
### BEGIN HIDDEN TESTS
def _pool_by_hand(pool, x, present=None):
    """Seeds attending to the real elements of each set, head by head, in NumPy (float64); zeros for an empty set."""
    attn = pool.attn
    d_model, heads = attn.embed_dim, attn.num_heads
    width = d_model // heads
    w_q, w_k, w_v = np.split(attn.in_proj_weight.detach().double().numpy(), 3)
    b_q, b_k, b_v = np.split(attn.in_proj_bias.detach().double().numpy(), 3)
    w_o, b_o = attn.out_proj.weight.detach().double().numpy(), attn.out_proj.bias.detach().double().numpy()
    seeds = pool.seeds.detach().double().numpy()[0]
    x = np.asarray(torch.as_tensor(x).detach(), dtype=float)
    result = np.zeros((x.shape[0], seeds.shape[0], d_model))
    for b in range(x.shape[0]):
        real = x[b] if present is None else x[b][np.asarray(present[b], dtype=bool)]
        if len(real) == 0:
            continue
        q, k, v = seeds @ w_q.T + b_q, real @ w_k.T + b_k, real @ w_v.T + b_v
        mixed = []
        for h in range(heads):
            part = slice(h * width, (h + 1) * width)
            scores = q[:, part] @ k[:, part].T / math.sqrt(width)
            weights = np.exp(scores - scores.max(axis=1, keepdims=True))
            mixed.append(weights / weights.sum(axis=1, keepdims=True) @ v[:, part])
        result[b] = np.concatenate(mixed, axis=1) @ w_o.T + b_o
    return result


def _random_pool(d_model, heads, seeds, seed):
    """Your AttentionPooling, float64, every parameter drawn at random."""
    torch.manual_seed(seed)
    pool = AttentionPooling(d_model, heads, num_seeds=seeds).double()
    with torch.no_grad():
        for parameter in pool.parameters():
            parameter.copy_(torch.randn_like(parameter) * 0.7)
    return pool


def _check_pool_against_hand():
    for d_model, heads, seeds, batch, n in [(4, 1, 1, 3, 5), (8, 2, 3, 2, 7), (12, 4, 2, 1, 1), (6, 3, 4, 2, 9)]:
        pool = _random_pool(d_model, heads, seeds, seed=d_model + n)
        x = torch.randn(batch, n, d_model, dtype=torch.float64)
        expect_close(pool(x), _pool_by_hand(pool, x), f"the pooled sets for d_model={d_model}, {heads} head(s), "
                     f"{seeds} seed(s), x ({batch}, {n}, {d_model}) without padding, compared with the seeds' "
                     "multi-head attention over the elements written out by hand")


_check_pool_against_hand()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_AttentionPooling_permutation", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests (hypothesis): permuting the elements of the sets (with their padding flags) leaves the output unchanged.
### BEGIN HIDDEN TESTS
@settings(max_examples=20, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck),
          report_multiple_bugs=False)
@given(st.integers(1, 3), st.integers(1, 8), st.sampled_from([(4, 1), (6, 2), (8, 4)]), st.integers(0, 10_000))
def _check_permutation_invariance(batch, n, shape, seed):
    d_model, heads = shape
    pool = _random_pool(d_model, heads, 2, seed)
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, n, d_model, generator=generator, dtype=torch.float64)
    present = torch.rand(batch, n, generator=generator) < 0.7
    present[:, 0] = True
    order = torch.randperm(n, generator=generator)
    for flags, what in [(None, "without padding"), (present, "with padding")]:
        before = pool(x, flags)
        after = pool(x[:, order], None if flags is None else flags[:, order])
        expect_close(after, torch.as_tensor(before).detach(), f"the pooled sets ({what}) after permuting the elements "
                     f"by {order.tolist()}, compared with before (a set has no order: the output must not change)")


_check_permutation_invariance()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_AttentionPooling_padding", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests (hypothesis): padding changes nothing: a padded set pools as its real elements alone, whatever the padding.
### BEGIN HIDDEN TESTS
@settings(max_examples=20, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck),
          report_multiple_bugs=False)
@given(st.integers(1, 3), st.integers(1, 6), st.integers(1, 4), st.sampled_from([(4, 1), (6, 2)]), st.integers(0, 10_000))
def _check_padding_invariance(batch, n, extra, shape, seed):
    d_model, heads = shape
    pool = _random_pool(d_model, heads, 2, seed)
    generator = torch.Generator().manual_seed(seed)
    total = n + extra
    present = torch.zeros(batch, total, dtype=torch.bool)
    for b in range(batch):  # n real elements per set, at random slots among n + extra
        present[b, torch.randperm(total, generator=generator)[:n]] = True
    x = torch.randn(batch, total, d_model, generator=generator, dtype=torch.float64) * 3
    x[~present] = torch.randn(int((~present).sum()), d_model, generator=generator, dtype=torch.float64) * 100
    got = pool(x, present)
    expected = _pool_by_hand(pool, x, present)
    alone = np.concatenate([np.asarray(torch.as_tensor(pool(x[b][present[b]][None])).detach(), dtype=float)
                            for b in range(batch)])
    expect_close(got, expected, f"the pooled sets with {extra} padding slot(s) of large random values among {n} real "
                 "elements, compared with attention over the real elements only (present False = padding: pass "
                 "key_padding_mask=~present, True where a key is ignored)")
    expect_close(got, alone, "the pooled padded sets, compared with your pooling of each set's real elements alone")


_check_padding_invariance()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_AttentionPooling_empty", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests: a set with no real element gives zeros (not nan), and the other sets of the batch are not affected.
### BEGIN HIDDEN TESTS
def _check_empty_set():
    pool = _random_pool(6, 2, 3, seed=64)
    x = torch.randn(3, 4, 6, dtype=torch.float64)
    present = torch.tensor([[True, True, False, True], [False, False, False, False], [True, False, False, False]])
    got = torch.as_tensor(pool(x, present)).detach()
    expect_shape(got, (3, 3, 6), "the pooled sets for x (3, 4, 6) and 3 seeds")
    assert not torch.isnan(got[1]).any(), (
        "a set with no real element (present all False) gives nan: softmax over no keys at all is 0 / 0; return zeros "
        "for such a set")
    bias = pool.attn.out_proj.bias.detach().double()
    hint = ""
    if torch.allclose(got[1].double(), bias.expand(3, 6), atol=1e-5):
        hint = (" (yours is out_proj's bias, which nn.MultiheadAttention returns with need_weights=False for a query "
                "whose keys are all ignored, and nan_to_num does not catch; set the output of an empty set to zeros)")
    expect_close(got[1], np.zeros((3, 6)), f"the pooled empty set (present all False; it must be zeros){hint}")
    expect_close(got, _pool_by_hand(pool, x, present), "the pooled sets of a batch holding an empty set (the other sets "
                 "must pool as usual)")


_check_empty_set()
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "gat_md", "locked": true, "schema_version": 3, "solution": false}
# ## 5. Attention over a graph (4 points)
#
# In a graph attention layer (Veličković et al., 2018) every node attends to
# its neighbours and to itself: attention masked by the adjacency matrix.
# Build `GATLayer(in_dim, out_dim, num_heads=1, concat=True)` with exactly
# these attributes:
#
# - `self.W`: `nn.Linear(in_dim, num_heads * out_dim, bias=False)`; head `h`
#   uses columns `h·out_dim … (h+1)·out_dim − 1` of `W x`
#   (`.view(N, num_heads, out_dim)` gives them);
# - `self.a`, an `nn.Parameter` of shape `(num_heads, 2 * out_dim)` (any small
#   random initialisation), where row `h` is `[a_left ‖ a_right]`, the first
#   `out_dim` entries and the last `out_dim` entries.
#
# `forward(x, adjacency)` takes node features `x (N, in_dim)` and
# `adjacency (N, N)` bool, where `adjacency[i, j]` is `True` when node `i`
# receives from (attends to) node `j`. For each head, with $\mathbf{z}_i$ the
# head's part of $W\mathbf{x}_i$:
#
# $$e_{ij} = \operatorname{LeakyReLU}_{0.2}\big(\mathbf{a}_\text{left} \cdot \mathbf{z}_i + \mathbf{a}_\text{right} \cdot \mathbf{z}_j\big),
# \qquad \alpha_{ij} = \operatorname{softmax}_{j \in \mathcal{N}(i)}\, e_{ij},
# \qquad \mathbf{o}_i = \sum_{j \in \mathcal{N}(i)} \alpha_{ij}\, \mathbf{z}_j,$$
#
# where $\mathcal{N}(i)$ holds the nodes `j` with `adjacency[i, j]` and node
# `i` itself (a self-loop is always added, and counted once if the adjacency
# already has it). This is the GAT paper's notation: its $e_{ij}$ is the
# score the book calls $s_{ij}$, and its $W\mathbf{x}_i$ (a column vector) is
# row `i` of `self.W(x)`: the paper's $W$, of shape
# `(num_heads * out_dim, in_dim)`, is `self.W.weight`, the transpose of the
# matrix the book's rows $\mathbf{x}_i W$ use. `LeakyReLU_0.2` has slope 0.2 for negative inputs (the
# default of `F.leaky_relu` is 0.01). No other non-linearity. Return the heads'
# outputs concatenated in head order, `(N, num_heads * out_dim)`, or, with
# `concat=False`, their average, `(N, out_dim)`.

# %% nbgrader={"grade": false, "grade_id": "GATLayer", "locked": false, "schema_version": 3, "solution": true}
class GATLayer(nn.Module):
    """Graph attention: x (N, in_dim), adjacency (N, N) bool -> (N, num_heads * out_dim), or (N, out_dim) averaged."""

    def __init__(self, in_dim, out_dim, num_heads=1, concat=True):
        super().__init__()
        ### BEGIN SOLUTION
        self.num_heads, self.out_dim, self.concat = num_heads, out_dim, concat
        self.W = nn.Linear(in_dim, num_heads * out_dim, bias=False)
        self.a = nn.Parameter(torch.empty(num_heads, 2 * out_dim))
        nn.init.xavier_uniform_(self.a)
        ### END SOLUTION

    def forward(self, x, adjacency):
        ### BEGIN SOLUTION
        n = x.shape[0]
        z = self.W(x).view(n, self.num_heads, self.out_dim)  # (N, H, out_dim)
        left = (z * self.a[:, :self.out_dim]).sum(dim=-1)  # (N, H): a_left . z_i
        right = (z * self.a[:, self.out_dim:]).sum(dim=-1)  # (N, H): a_right . z_j
        scores = F.leaky_relu(left[:, None, :] + right[None, :, :], negative_slope=0.2)  # (N_i, N_j, H)
        allowed = torch.as_tensor(adjacency, dtype=torch.bool, device=x.device)
        allowed = allowed | torch.eye(n, dtype=torch.bool, device=x.device)  # self-loops, counted once
        scores = scores.masked_fill(~allowed[:, :, None], float("-inf"))
        alpha = torch.softmax(scores, dim=1)  # over the neighbours j of each node i
        out = torch.einsum("ijh,jhd->ihd", alpha, z)  # (N, H, out_dim)
        return out.reshape(n, self.num_heads * self.out_dim) if self.concat else out.mean(dim=1)
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_GATLayer", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: the parts and the outputs' shapes, and a worked example where every node averages its neighbourhood.
torch.manual_seed(0)
_gat = GATLayer(5, 3, num_heads=2)
assert isinstance(getattr(_gat, "W", None), nn.Linear) and _gat.W.bias is None, (
    "GATLayer needs self.W, an nn.Linear(in_dim, num_heads * out_dim, bias=False)")
expect_shape(_gat.W.weight, (6, 5), "W.weight (nn.Linear(in_dim=5, num_heads * out_dim = 6))")
assert isinstance(getattr(_gat, "a", None), nn.Parameter), "GATLayer needs self.a, an nn.Parameter (num_heads, 2 * out_dim)"
expect_shape(_gat.a, (2, 6), "a (num_heads=2, 2 * out_dim = 6)")
_ring = torch.roll(torch.eye(4, dtype=torch.bool), 1, dims=1) | torch.roll(torch.eye(4, dtype=torch.bool), -1, dims=1)
expect_shape(_gat(torch.randn(4, 5), _ring), (4, 6), "the output for 4 nodes, 2 heads of out_dim 3, concatenated")
_gat = GATLayer(5, 3, num_heads=2, concat=False)
expect_shape(_gat(torch.randn(4, 5), _ring), (4, 3), "the output for 4 nodes, 2 heads of out_dim 3, averaged (concat=False)")

# Worked example: a path 0 - 1 - 2 and a node 3 without edges; W is the identity and a is zero, so every score is 0
# and each node averages itself and its neighbours: node 0 (x0 + x1) / 2, node 1 (x0 + x1 + x2) / 3,
# node 2 (x1 + x2) / 2, node 3 itself.
_x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [5.0, -1.0]], dtype=torch.float64)
_adjacency = torch.tensor([[False, True, False, False], [True, False, True, False],
                           [False, True, False, False], [False, False, False, False]])
_gat = GATLayer(2, 2).double()
with torch.no_grad():
    _gat.W.weight.copy_(torch.eye(2))
    _gat.a.zero_()
    _out = _gat(_x, _adjacency)
expect_close(_out, [[0.5, 0.5], [1.0, 1.0], [1.0, 1.5], [5.0, -1.0]],
             "the output of the worked example (scores all 0, so each node averages itself and its neighbours: node 0 "
             "(0.5, 0.5), node 1 (1, 1), node 2 (1, 1.5), node 3 without edges itself (5, -1))")

# Worked example with scores, two heads and a directed graph. Three nodes, x = (1, 0), (0, 1), (1, 1). Edges:
# adjacency[0, 1] (node 0 receives from node 1) and adjacency[2, 0] (node 2 receives from node 0); node 1 receives
# from nobody. With self-loops: node 0 attends to {0, 1}, node 1 to {1}, node 2 to {0, 2}.
# W stacks the identity and twice the identity: head 0 uses columns 0-1 of W x, z_i = x_i; head 1 columns 2-3,
# z_i = 2 x_i. a_left = 0 in both heads, so e_ij = LeakyReLU_0.2(a_right . z_j):
# head 0: a_right = (-5 ln 2, 0): e = LeakyReLU_0.2(-5 ln 2) = -ln 2 for j = 0 and 2, 0 for j = 1 (exp: 1/2, 1/2, 1);
# head 1: a_right = (0, ln 3 / 2): e = ln 3 for j = 1 and 2, 0 for j = 0 (exp: 1, 3, 3).
# Head 0: node 0 weights (1/3, 2/3) on nodes (0, 1): (1/3, 2/3); node 1 itself: (0, 1); node 2 (1/2, 1/2): (1, 0.5).
# Head 1: node 0 weights (1/4, 3/4): (0.5, 1.5); node 1 itself: (0, 2); node 2 (1/4, 3/4) on (0, 2): (2, 1.5).
# Concatenated in head order: node 0 (1/3, 2/3, 0.5, 1.5), node 1 (0, 1, 0, 2), node 2 (1, 0.5, 2, 1.5).
_x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
_adjacency = torch.tensor([[False, True, False], [False, False, False], [True, False, False]])
_gat = GATLayer(2, 2, num_heads=2).double()
with torch.no_grad():
    _gat.W.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [0.0, 2.0]]))
    _gat.a.copy_(torch.tensor([[0.0, 0.0, -5 * math.log(2), 0.0], [0.0, 0.0, 0.0, math.log(3) / 2]]))
    _out = torch.as_tensor(_gat(_x, _adjacency)).detach()
expect_shape(_out, (3, 4), "the output of the second worked example (3 nodes, 2 heads of out_dim 2, concatenated)")
_hint = ""
if torch.allclose(_out[1].float(), torch.tensor([0.0, 0.0, 1.0, 2.0])):
    _hint = (" (node 1's output is (0, 0, 1, 2): head h must take columns h * out_dim ... (h + 1) * out_dim - 1 of W x, "
             "W(x).view(N, num_heads, out_dim), not every num_heads-th column)")
elif not torch.allclose(_out[1].float(), torch.tensor([0.0, 1.0, 0.0, 2.0])):
    _hint = (" (node 1 receives from nobody, adjacency[1] is all False, so it attends to itself only and its output is "
             "its own z, (0, 1) and (0, 2); yours mixes in other nodes: adjacency[i, j] True means i receives from j, so read row i "
             "of the adjacency, not column i)")
elif abs(float(_out[0, 0]) - 2 ** -0.05 / (1 + 2 ** -0.05)) < 1e-6:
    _hint = (" (node 0's head 0 weights are those of LeakyReLU with slope 0.01, F.leaky_relu's default: GAT uses "
             "negative_slope=0.2)")
expect_close(_out, [[1 / 3, 2 / 3, 0.5, 1.5], [0.0, 1.0, 0.0, 2.0], [1.0, 0.5, 2.0, 1.5]],
             "the output of the second worked example (directed edges 0 <- 1 and 2 <- 0, self-loops added, scores "
             "LeakyReLU_0.2(a_right . z_j), two heads concatenated in head order: node 0 (1/3, 2/3, 0.5, 1.5), node 1 "
             f"(0, 1, 0, 2), node 2 (1, 0.5, 2, 1.5)){_hint}")

# %% nbgrader={"grade": true, "grade_id": "test_GATLayer_oracle", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: one head agrees with a loop over nodes and neighbours, on random directed graphs, float64.
# Some nodes have self-loops in the adjacency (counted once), some have no edges; adjacency[i, j]: i receives from j.
### BEGIN HIDDEN TESTS
def _gat_by_loops(gat, x, adjacency, heads, out_dim, concat):
    """Graph attention node by node and head by head, in NumPy (float64)."""
    z = np.asarray(x.detach(), dtype=float) @ gat.W.weight.detach().double().numpy().T
    a = gat.a.detach().double().numpy()
    adjacency = np.asarray(adjacency, dtype=bool)
    n = len(z)
    out = np.zeros((n, heads, out_dim))
    for h in range(heads):
        zh = z[:, h * out_dim:(h + 1) * out_dim]
        for i in range(n):
            neighbours = sorted({i} | {j for j in range(n) if adjacency[i, j]})
            e = np.array([a[h, :out_dim] @ zh[i] + a[h, out_dim:] @ zh[j] for j in neighbours])
            e = np.where(e > 0, e, 0.2 * e)
            alpha = np.exp(e - e.max())
            alpha /= alpha.sum()
            out[i, h] = alpha @ zh[neighbours]
    return out.reshape(n, heads * out_dim) if concat else out.mean(axis=1)


def _random_gat(in_dim, out_dim, heads, concat, seed):
    """Your GATLayer, float64, with W and a drawn at random."""
    torch.manual_seed(seed)
    gat = GATLayer(in_dim, out_dim, num_heads=heads, concat=concat).double()
    with torch.no_grad():
        gat.W.weight.copy_(torch.randn_like(gat.W.weight))
        gat.a.copy_(torch.randn_like(gat.a))
    return gat


def _random_graph(n, density, generator):
    adjacency = torch.rand(n, n, generator=generator) < density  # directed: adjacency[i, j] need not be adjacency[j, i]
    adjacency[0] = False  # node 0 receives from nobody
    return adjacency


def _check_gat_against_loops(heads_list, concat_list, what):
    for n, in_dim, out_dim, density in [(6, 4, 3, 0.4), (9, 3, 5, 0.25), (1, 2, 2, 0.5), (12, 5, 4, 0.6)]:
        for heads in heads_list:
            for concat in concat_list:
                gat = _random_gat(in_dim, out_dim, heads, concat, seed=n + heads)
                generator = torch.Generator().manual_seed(n * 7 + heads)
                x = torch.randn(n, in_dim, generator=generator, dtype=torch.float64)
                adjacency = _random_graph(n, density, generator)
                expect_close(gat(x, adjacency), _gat_by_loops(gat, x, adjacency, heads, out_dim, concat),
                             f"the output of GATLayer({in_dim}, {out_dim}, num_heads={heads}, concat={concat}) on a "
                             f"random directed graph of {n} nodes (adjacency[i, j] True: i receives from j; self-loops "
                             f"always added, counted once), compared with a loop over nodes and neighbours{what}")


_check_gat_against_loops([1], [True], "")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_GATLayer_heads", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: several heads, concatenated in head order (concat=True) or averaged (concat=False), against loops.
### BEGIN HIDDEN TESTS
_check_gat_against_loops([2, 3], [True, False], " (head h uses columns h * out_dim ... (h + 1) * out_dim - 1 of W x "
                         "and row h of a; concatenated in head order, or averaged)")
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_GATLayer_neighbours", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests (hypothesis): a node's output does not change when only nodes it does not receive from change.
### BEGIN HIDDEN TESTS
@settings(max_examples=25, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck),
          report_multiple_bugs=False)
@given(st.integers(2, 8), st.floats(0.0, 0.8), st.integers(1, 2), st.integers(0, 10_000))
def _check_neighbours_only(n, density, heads, seed):
    gat = _random_gat(3, 2, heads, True, seed)
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=generator, dtype=torch.float64)
    adjacency = torch.rand(n, n, generator=generator) < density
    node = int(torch.randint(0, n, (1,), generator=generator))
    outside = ~adjacency[node]
    outside[node] = False
    if not outside.any():
        return
    changed = x.clone()
    changed[outside] += torch.randn(int(outside.sum()), 3, generator=generator, dtype=torch.float64) * 5
    before, after = torch.as_tensor(gat(x, adjacency)).detach(), torch.as_tensor(gat(changed, adjacency)).detach()
    moved = float((after[node] - before[node]).abs().max())
    tolerance = 1e-5 if before.dtype in (torch.float32, torch.float16, torch.bfloat16) else 1e-8  # as stated
    assert moved < tolerance * (1 + float(before[node].abs().max())), (
        f"node {node}'s output changes by {moved:.3g} when only nodes it does not receive from change (nodes "
        f"{torch.nonzero(outside).ravel().tolist()} of {n}): softmax over node {node}'s neighbours and itself only "
        "(adjacency[i, j] True: i receives from j), not over all nodes")


_check_neighbours_only()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_GATLayer_equivariance", "locked": true, "points": 0.5, "schema_version": 3, "solution": false}
# Hidden tests (hypothesis): relabelling the nodes (permuting x and the adjacency's rows and columns) permutes the output.
### BEGIN HIDDEN TESTS
@settings(max_examples=25, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck),
          report_multiple_bugs=False)
@given(st.integers(1, 8), st.floats(0.0, 0.8), st.integers(1, 3), st.booleans(), st.integers(0, 10_000))
def _check_relabelling(n, density, heads, concat, seed):
    gat = _random_gat(4, 3, heads, concat, seed)
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=generator, dtype=torch.float64)
    adjacency = torch.rand(n, n, generator=generator) < density
    order = torch.randperm(n, generator=generator)
    before = torch.as_tensor(gat(x, adjacency)).detach()
    after = gat(x[order], adjacency[order][:, order])
    expect_close(after, before[order], f"the output after relabelling the {n} nodes by {order.tolist()} (x[order], "
                 "adjacency[order][:, order]), compared with the output before, relabelled the same way")


_check_relabelling()
### END HIDDEN TESTS
