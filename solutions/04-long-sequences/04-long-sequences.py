# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false}
# # Exercise 4: attention over very long sequences
#
# Full attention holds an $m \times n$ matrix of scores. For a million keys
# that no longer fits. In this notebook you compute exactly the same result
# in bounded memory, by streaming over the keys with an *online softmax*
# (Milakov & Gimelshein, 2018; Rabe & Staats, 2021), and you build the
# key–value cache that makes generating one token at a time cheap.
#
# | # | you build | points |
# |---|---|---|
# | 1 | `online_softmax(x, chunk_size)`: softmax in chunks with a running maximum and normaliser | 3 |
# | 2 | `streaming_attention(Q, K, V, chunk_size)`: attention over key chunks in bounded memory | 5 |
# | 3 | `KVCache`: incremental decoding that equals full causal attention | 3 |
# | | **total** | **11** |
#
# **How to work.** Replace every `raise NotImplementedError()` with your code.
# Keep the names and arguments: the grader calls them. Do not edit or delete
# test cells; the grader restores its own copy of each.
#
# **How it is graded.** Visible tests check shapes and one worked example.
# Hidden tests check chunk sizes that do not divide the length, chunks of 1
# and larger than the input, scores in the thousands, many random shapes (with
# `hypothesis`), that `online_softmax` reads its input only in chunks, and
# that `streaming_attention` stays within the memory budget stated in
# exercise 2, which full attention breaks. A test cell earns its points when
# it runs without an error. The notebook runs in well under 20 seconds on one
# CPU core and needs only NumPy.
#
# **Fair grading.** The values decide: a warning your code raises costs no
# points (when a value is wrong, the test names the warning). Answers in
# float32 are compared at float32's precision. The tests compare with their
# own copy of `full_attention`, so you may write your own function under that
# name. The names `expect_shape`, `expect_close`, `recorded_warnings`,
# `ChunkReader` and `peak_memory_of` belong to the tests: do not define your own
# with these names.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}
import contextlib
import tracemalloc
import warnings

import numpy as np


def full_attention(Q, K, V):
    """Reference: softmax(Q K^T / sqrt(d_k)) V, holding the whole (m, n) score matrix. Given to you."""
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (weights / weights.sum(axis=-1, keepdims=True)) @ V


# The tests' own reference to full_attention: a function of your own under that name changes nothing for them.
_full_attention_oracle = full_attention


class ChunkReader:
    """A 1-D sequence of scores that can only be read in slices, like a file too large to load at once.

    ``len(reader)`` is its length and ``reader[start:stop]`` returns those
    entries as a NumPy array, at most `chunk_size` of them per read. It counts
    what it hands out (`largest_read`, `entries_read`), and refuses to be turned
    into one array with ``np.asarray``. Given to you, to check exercise 1.
    """

    def __init__(self, values, chunk_size):
        self._values = np.asarray(values, dtype=float)
        self.chunk_size = chunk_size
        self.largest_read = 0
        self.entries_read = 0

    def __len__(self):
        return len(self._values)

    @property
    def shape(self):
        return self._values.shape

    @property
    def size(self):
        return self._values.size

    def __getitem__(self, index):
        if not isinstance(index, slice):
            raise TypeError(f"read a ChunkReader in slices, x[start:stop], not x[{index!r}]")
        part = self._values[index]
        if part.size > self.chunk_size:
            raise ValueError(f"x[{index.start}:{index.stop}] reads {part.size} entries at once; read at most "
                             f"chunk_size = {self.chunk_size} at a time")
        self.largest_read = max(self.largest_read, part.size)
        self.entries_read += part.size
        return part.copy()

    def __array__(self, *args, **kwargs):
        raise TypeError("this x can only be read chunk by chunk, x[start:start + chunk_size]; np.asarray(x) would "
                        "read all of it at once")


def peak_memory_of(call):
    """(call(), the bytes of memory it took at its peak): how the memory test of exercise 2 measures.

    Here `tracemalloc` counts what Python and NumPy allocate during the call.
    The grader counts instead the memory of your kernel's processes as the
    operating system sees it, beyond the arrays the test passes in.
    """
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# What a warning usually means, for the messages of failed tests.
WARNING_CLUES = {
    "overflow encountered in exp": "exp of a large score overflows to inf: subtract the largest score first",
    "invalid value encountered in subtract": "inf - inf is nan: a chunk whose entries are all -inf minus its maximum (-inf)",
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

# %% [markdown] nbgrader={"grade": false, "grade_id": "online_md", "locked": true, "schema_version": 3, "solution": false}
# ## 1. The online softmax (3 points)
#
# Softmax needs the maximum $\mu = \max_j x_j$ (for stability) and the
# normaliser $\ell = \sum_j e^{x_j - \mu}$ before it can output anything. The
# online softmax computes both in **one pass** over chunks of $x$, keeping a
# running maximum $\mu$ and a running normaliser $\ell$. When the chunk of
# entries with indices in the set $J$ arrives:
#
# $$\mu' = \max\big(\mu, \max_{j \in J} x_j\big),\qquad
# \ell' = \ell\, e^{\mu - \mu'} + \sum_{j \in J} e^{x_j - \mu'} .$$
#
# The factor $e^{\mu - \mu'}$ rescales what was summed against the old maximum
# to the new one. Start from $\mu = -\infty$, $\ell = 0$. At the end,
# $\operatorname{softmax}(x)_j = e^{x_j - \mu} / \ell$.
#
# Write `online_softmax(x, chunk_size)`, returning the weights as a NumPy
# array of length `len(x)`. Make one pass over the chunks `x[0:chunk_size]`,
# `x[chunk_size:2*chunk_size]`, ... (the last may be shorter) to find $\mu$ and
# $\ell$, then a second pass over the same chunks to write the weights.
# Entries may be `-inf` (weight 0); if all are, return zeros. Careful: while
# every entry seen so far is `-inf`, $\mu = -\infty$ and $e^{\mu - \mu'}$ may be
# $e^{-\infty - (-\infty)}$.
#
# `x` is a 1-D NumPy array or a `ChunkReader` (given above), which stands for
# scores too many to hold at once: it has `len(x)` and gives slices
# `x[start:stop]` of at most `chunk_size` entries. Read `x` only that way:
# the tests check that no read is longer than `chunk_size` and that you read
# at most `2 * len(x)` entries in all (each chunk once per pass).

# %% nbgrader={"grade": false, "grade_id": "online_softmax", "locked": false, "schema_version": 3, "solution": true}
def online_softmax(x, chunk_size):
    """Softmax of 1-D x (length n) from a running maximum and normaliser over chunks of x -> (n,)."""
    ### BEGIN SOLUTION
    running_max, normaliser = -np.inf, 0.0
    for start in range(0, len(x), chunk_size):
        chunk = np.asarray(x[start:start + chunk_size], dtype=float)
        new_max = max(running_max, float(chunk.max()))
        if new_max == -np.inf:
            continue  # nothing but -inf so far: nothing to add
        normaliser = normaliser * np.exp(running_max - new_max) + np.exp(chunk - new_max).sum()
        running_max = new_max
    weights = np.zeros(len(x))
    if normaliser > 0.0:
        for start in range(0, len(x), chunk_size):
            chunk = np.asarray(x[start:start + chunk_size], dtype=float)
            weights[start:start + chunk_size] = np.exp(chunk - running_max) / normaliser
    return weights
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_online_softmax", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: shape and one worked example, in chunks of 2.
got = online_softmax(np.array([1.0, 2.0, 3.0]), chunk_size=2)
expect_shape(got, (3,), "online_softmax of 3 numbers")
expect_close(got, [0.09003057, 0.24472847, 0.66524096], "online_softmax([1, 2, 3], chunk_size=2)")

# %% nbgrader={"grade": true, "grade_id": "test_online_softmax_chunks", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: every chunk size from 1 to beyond the length, large scores, -inf entries and chunks.
### BEGIN HIDDEN TESTS
rng = np.random.default_rng(0)
x = rng.normal(scale=50.0, size=23)
e = np.exp(x - x.max())
reference = e / e.sum()
for chunk_size in (1, 2, 5, 7, 22, 23, 100):
    with recorded_warnings() as warned:
        got = online_softmax(x, chunk_size)
    expect_close(got, reference, f"online_softmax of 23 scores with chunk_size={chunk_size} (rescale the normaliser by "
                 "exp(m - m') whenever the maximum grows)", warned=warned)
with recorded_warnings() as warned:
    got = online_softmax(np.array([1.0, 1e3, 2e3, 3e3]), 1)  # the maximum grows in every chunk
expect_close(got, [0.0, 0.0, 0.0, 1.0], "online_softmax([1, 1e3, 2e3, 3e3], 1)", warned=warned)
with recorded_warnings() as warned:
    got = online_softmax(np.array([-np.inf, -np.inf, 0.0, np.log(3.0)]), 2)
expect_close(got, [0.0, 0.0, 0.25, 0.75], "online_softmax([-inf, -inf, 0, log 3], 2) (a first chunk of only -inf must "
             "not give nan)", warned=warned)
with recorded_warnings() as warned:
    got = online_softmax(np.full(5, -np.inf), 2)
expect_close(got, np.zeros(5), "online_softmax of all -inf (zeros)", warned=warned)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_online_softmax_streams", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: x is read only in chunks of at most chunk_size, and at most twice over.
reader = ChunkReader([1.0, 2.0, 3.0, 0.0, -1.0], chunk_size=2)
expect_close(online_softmax(reader, chunk_size=2), [0.08612854, 0.23412166, 0.63640865, 0.03168492, 0.01165623],
             "online_softmax(ChunkReader([1, 2, 3, 0, -1], chunk_size=2), chunk_size=2)")
assert reader.entries_read <= 10, f"online_softmax read {reader.entries_read} entries of 5; at most 2 * 5 = 10 are needed"
# Hidden tests: longer inputs and other chunk sizes.
### BEGIN HIDDEN TESTS
rng = np.random.default_rng(5)
scores = rng.normal(scale=20.0, size=1000)
e = np.exp(scores - scores.max())
for chunk_size in (1, 64, 300, 1000):
    reader = ChunkReader(scores, chunk_size)
    with recorded_warnings() as warned:
        got = online_softmax(reader, chunk_size)
    expect_close(got, e / e.sum(), f"online_softmax of 1,000 scores read through a ChunkReader with chunk_size={chunk_size}",
                 warned=warned)
    assert reader.entries_read <= 2 * len(scores), (
        f"online_softmax read {reader.entries_read:,} entries of x (chunk_size={chunk_size}, n = 1,000); at most 2n = "
        f"2,000 are needed: one pass for the running maximum and normaliser together, one for the weights.")
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "streaming_md", "locked": true, "schema_version": 3, "solution": false}
# ## 2. Streaming attention (5 points)
#
# Now do the same for attention. For queries $Q$ `(m, d_k)`, keys $K$ `(n, d_k)` and
# values $V$ `(n, d_v)`, `streaming_attention(Q, K, V, chunk_size)` must return
# exactly `full_attention(Q, K, V)`, that is
# $\operatorname{softmax}(QK^\top/\sqrt{d_k})V$, shape `(m, d_v)`, while never
# holding more than `m × chunk_size` scores at a time ($m$ is the number of
# queries). Keep, for every query $i$, a running maximum $\mu_i$, a running
# normaliser $\ell_i$ and a running *unnormalised* output
# $\mathbf{o}_i \in \mathbb{R}^{d_v}$. For each chunk of keys $K_J$ and values
# $V_J$ (the rows with indices in the set $J$):
#
# $$s_{ij} = \mathbf{q}_i \mathbf{k}_j^\top / \sqrt{d_k}\ (j \in J),\quad \mu_i' = \max(\mu_i, \max_{j \in J} s_{ij}),\quad
# \ell_i' = \ell_i e^{\mu_i - \mu_i'} + \sum_{j \in J} e^{s_{ij} - \mu_i'},\quad
# \mathbf{o}_i' = \mathbf{o}_i e^{\mu_i - \mu_i'} + \sum_{j \in J} e^{s_{ij} - \mu_i'} \mathbf{v}_j .$$
#
# At the end the output is $\mathbf{o}_i / \ell_i$. Take chunks
# `K[start:start + chunk_size]` (slices are views, they cost no memory), and
# do not build anything of size `n` per query.
#
# **The memory bound.** A hidden test runs 128 queries over 200,000 keys
# (`d_k = 8`, `d_v = 4`) in chunks of 2,048 and allows at most **64 MiB** of new
# memory at the peak, beyond the inputs. The grader measures it as the
# operating system counts the memory of your kernel's processes, so memory that
# is freed again, or taken in another process, counts all the same;
# `peak_memory_of(lambda: streaming_attention(Q, K, V, 2048))` (given in the
# first cell) measures it here with `tracemalloc`. That is plenty for a copy
# of `K` and `V` (18 MiB: scale or cast them once if you like) and for many
# `m × chunk_size` arrays (2 MiB each); the full 128 × 200,000 score matrix
# alone would take 195 MiB.

# %% nbgrader={"grade": false, "grade_id": "streaming_attention", "locked": false, "schema_version": 3, "solution": true}
def streaming_attention(Q, K, V, chunk_size):
    """softmax(Q K^T / sqrt(d_k)) V over key chunks: (m, d_k), (n, d_k), (n, d_v) -> (m, d_v)."""
    ### BEGIN SOLUTION
    Q = np.asarray(Q, dtype=float)
    scale = 1.0 / np.sqrt(Q.shape[-1])
    m = Q.shape[0]
    running_max = np.full((m, 1), -np.inf)
    normaliser = np.zeros((m, 1))
    output = np.zeros((m, V.shape[-1]))
    for start in range(0, K.shape[0], chunk_size):
        scores = (Q @ K[start:start + chunk_size].T) * scale  # (m, chunk)
        new_max = np.maximum(running_max, scores.max(axis=1, keepdims=True))
        rescale = np.exp(running_max - new_max)  # exp(-inf) = 0 on the first chunk
        weights = np.exp(scores - new_max)
        normaliser = normaliser * rescale + weights.sum(axis=1, keepdims=True)
        output = output * rescale + weights @ V[start:start + chunk_size]
        running_max = new_max
    return output / normaliser
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_streaming_attention", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: shape, and agreement with full attention on a small example.
rng = np.random.default_rng(1)
Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(10, 4)), rng.normal(size=(10, 2))
got = streaming_attention(Q, K, V, chunk_size=4)
expect_shape(got, (3, 2), "streaming_attention for 3 queries, 10 keys, d_v = 2")
expect_close(got, _full_attention_oracle(Q, K, V), "streaming_attention(Q, K, V, chunk_size=4) compared with full_attention")

# %% nbgrader={"grade": true, "grade_id": "test_streaming_attention_chunks", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: chunk sizes that do not divide n, chunks of 1 and of at least n, large score magnitudes.
### BEGIN HIDDEN TESTS
rng = np.random.default_rng(2)
Q, K, V = rng.normal(size=(5, 8)), rng.normal(size=(37, 8)), rng.normal(size=(37, 3))
reference = _full_attention_oracle(Q, K, V)
for chunk_size in (1, 2, 5, 10, 36, 37, 38, 1000):
    with recorded_warnings() as warned:
        got = streaming_attention(Q, K, V, chunk_size)
    expect_close(got, reference, f"streaming_attention with n = 37 keys and chunk_size = {chunk_size}", warned=warned)
big_Q, big_K = Q * 40.0, K * 40.0  # scores in the thousands: exp would overflow without the running maximum
with recorded_warnings() as warned:
    got = streaming_attention(big_Q, big_K, V, 6)
expect_close(got, _full_attention_oracle(big_Q, big_K, V),
             "streaming_attention with scores in the thousands (subtract the running maximum)", warned=warned)
ordered = np.linspace(0, 1, 12)[:, None] * np.ones((12, 4)) * 30.0  # the maximum grows with every chunk
with recorded_warnings() as warned:
    got = streaming_attention(Q[:, :4], ordered, V[:12], 3)
expect_close(got, _full_attention_oracle(Q[:, :4], ordered, V[:12]),
             "streaming_attention when a later chunk holds a larger score (rescale the output and the normaliser)",
             warned=warned)
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_streaming_attention_random", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests (hypothesis): many random shapes and chunk sizes agree with full attention.
### BEGIN HIDDEN TESTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 6), st.integers(1, 40), st.integers(1, 8), st.integers(1, 5), st.integers(1, 45), st.integers(0, 10**6))
def check(m, n, d, d_v, chunk_size, seed):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(m, d)) * 3, rng.normal(size=(n, d)) * 3, rng.normal(size=(n, d_v))
    expect_close(streaming_attention(Q, K, V, chunk_size), _full_attention_oracle(Q, K, V),
                 f"streaming_attention for m={m}, n={n}, d={d}, d_v={d_v}, chunk_size={chunk_size}")


with recorded_warnings():
    check()
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_streaming_attention_memory", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden test: 128 queries over 200,000 keys in chunks of 2,048 within the 64 MiB the instructions state.
### BEGIN HIDDEN TESTS
rng = np.random.default_rng(3)
m, n, d, d_v, chunk = 128, 200_000, 8, 4, 2048
Q, K, V = rng.normal(size=(m, d)), rng.normal(size=(n, d)), rng.normal(size=(n, d_v))
with recorded_warnings() as warned:
    got, peak = peak_memory_of(lambda: streaming_attention(Q, K, V, chunk))
expect_close(got, _full_attention_oracle(Q, K, V), "streaming_attention over 200,000 keys", warned=warned)
MiB = 2**20
assert peak <= 64 * MiB, (
    f"streaming_attention over {n:,} keys in chunks of {chunk:,} took {peak / MiB:.0f} MiB of new memory at its peak "
    f"(the memory of your kernel's processes, beyond the inputs); the limit is 64 MiB. For comparison: a copy of K and V takes {(K.nbytes + V.nbytes) / MiB:.0f} "
    f"MiB, the scores of one chunk {m * chunk * 8 / MiB:.0f} MiB, and the full {m} x {n:,} score matrix "
    f"{m * n * 8 / MiB:.0f} MiB. Keep only the running maximum, normaliser and output across chunks, and let the "
    "scores of a chunk go before the next.")
### END HIDDEN TESTS

# %% [markdown] nbgrader={"grade": false, "grade_id": "kv_md", "locked": true, "schema_version": 3, "solution": false}
# ## 3. The key–value cache (3 points)
#
# A model that generates text produces one token at a time; token $t$ attends
# to tokens $0, \dots, t$ (a causal mask). Recomputing every key and value at
# every step would cost $O(t)$ projections per token. Instead, keep the keys
# and values of past tokens in a cache and only add the new token's.
#
# Write the class `KVCache(d_k, d_v)`:
#
# - `append(k, v)` adds one key `(d_k,)` and one value `(d_v,)`;
# - `attend(q)` returns the attention output `(d_v,)` of one query `(d_k,)`
#   over every key in the cache, with scale $1/\sqrt{d_k}$;
# - `len(cache)` is the number of cached tokens.
#
# Growing arrays with `np.vstack` copies the whole cache at every append, a
# cost of the same order as reading it; Hugging Face's default `DynamicCache`
# does the same (`torch.cat`), its `StaticCache` allocates the rows ahead and
# writes one per token, and vLLM allocates fixed-size blocks as needed. Both
# ways are accepted here.
#
# Then `incremental_self_attention(X, W_q, W_k, W_v)` generates the outputs one
# token at a time: for each row $\mathbf{x}_t$ of `X (n, d_model)`, append its key
# $\mathbf{x}_t W_k$ and value $\mathbf{x}_t W_v$, then attend with its query
# $\mathbf{x}_t W_q$. Stack the outputs into `(n, d_v)`. The result must equal
# full causal self-attention.

# %% nbgrader={"grade": false, "grade_id": "KVCache", "locked": false, "schema_version": 3, "solution": true}
class KVCache:
    """Keys and values of the tokens generated so far, and attention over them."""

    def __init__(self, d_k, d_v):
        ### BEGIN SOLUTION
        # Preallocated rows, filled up to self.size: appending writes one row, where np.vstack
        # would copy the whole cache for every token. The storage doubles when full.
        self.keys = np.zeros((16, d_k))
        self.values = np.zeros((16, d_v))
        self.size = 0
        ### END SOLUTION

    def append(self, k, v):
        ### BEGIN SOLUTION
        if self.size == len(self.keys):
            self.keys = np.concatenate([self.keys, np.zeros_like(self.keys)])
            self.values = np.concatenate([self.values, np.zeros_like(self.values)])
        self.keys[self.size] = k
        self.values[self.size] = v
        self.size += 1
        ### END SOLUTION

    def attend(self, q):
        ### BEGIN SOLUTION
        keys, values = self.keys[:self.size], self.values[:self.size]
        scores = keys @ np.asarray(q, dtype=float) / np.sqrt(keys.shape[1])
        weights = np.exp(scores - scores.max())
        return weights @ values / weights.sum()
        ### END SOLUTION

    def __len__(self):
        ### BEGIN SOLUTION
        return self.size
        ### END SOLUTION


def incremental_self_attention(X, W_q, W_k, W_v):
    """Causal self-attention computed one token at a time with a KVCache: X (n, d_model) -> (n, d_v)."""
    ### BEGIN SOLUTION
    cache = KVCache(W_k.shape[1], W_v.shape[1])
    outputs = []
    for x in np.asarray(X, dtype=float):
        cache.append(x @ W_k, x @ W_v)
        outputs.append(cache.attend(x @ W_q))
    return np.array(outputs)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test_KVCache", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Visible test: one cached key attends to itself; two keys with equal scores average their values.
cache = KVCache(2, 1)
cache.append(np.array([1.0, 0.0]), np.array([5.0]))
assert len(cache) == 1, f"after one append, len(cache) should be 1, not {len(cache)}"
expect_close(cache.attend(np.array([3.0, 1.0])), [5.0], "attend with one cached token (all weight on it)")
cache.append(np.array([0.0, 1.0]), np.array([1.0]))
expect_close(cache.attend(np.array([2.0, 2.0])), [3.0], "attend when both keys score the same (the mean of the values)")

# %% nbgrader={"grade": true, "grade_id": "test_KVCache_causal", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden tests: incremental decoding equals full causal self-attention, for several sizes.
### BEGIN HIDDEN TESTS
rng = np.random.default_rng(4)
for n, d_model, d_k, d_v in [(1, 3, 2, 2), (9, 6, 4, 3), (20, 8, 8, 5)]:
    X = rng.normal(size=(n, d_model))
    W_q, W_k, W_v = rng.normal(size=(d_model, d_k)) * 2, rng.normal(size=(d_model, d_k)) * 2, rng.normal(size=(d_model, d_v))
    got = incremental_self_attention(X, W_q, W_k, W_v)
    expect_shape(got, (n, d_v), f"incremental_self_attention for n={n}, d_v={d_v}")
    Qf, Kf, Vf = X @ W_q, X @ W_k, X @ W_v
    scores = np.where(np.tril(np.ones((n, n), bool)), Qf @ Kf.T / np.sqrt(d_k), -np.inf)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    expect_close(got, (w / w.sum(axis=1, keepdims=True)) @ Vf,
                 f"incremental_self_attention for n={n} compared with full causal self-attention "
                 "(token t must attend to tokens 0..t, itself included)")
cache = KVCache(3, 2)
for _ in range(5):
    cache.append(rng.normal(size=3), rng.normal(size=2))
assert len(cache) == 5, f"after five appends, len(cache) should be 5, not {len(cache)}"
### END HIDDEN TESTS

# %% nbgrader={"grade": true, "grade_id": "test_KVCache_large_scores", "locked": true, "points": 1, "schema_version": 3, "solution": false}
# Hidden test: attend is stable for scores in the thousands.
### BEGIN HIDDEN TESTS
big = KVCache(2, 1)
big.append(np.array([1000.0, 0.0]), np.array([1.0]))
big.append(np.array([0.0, 1000.0]), np.array([2.0]))
with recorded_warnings() as warned:
    got = big.attend(np.array([10.0, 0.0]))
expect_close(got, [1.0], "attend with scores in the thousands (subtract the maximum)", warned=warned)
### END HIDDEN TESTS
