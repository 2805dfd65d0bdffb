"""Chapter 1 and 4 submissions from issue 30's table: what a student with the grader's source could try while the
tests ran in the student's own kernel, and the honest answers that the old guard failed, by student id.

Generators only: tests/e2e/test_verdict_outside.py grades them through the real command. The scores each attack got
on main before the checker (commit 2a6a62c, the guard in the kernel), graded as here, are in OLD_SCORES; now each
scores what its answers are worth.
"""
from __future__ import annotations

import nbformat

from autograde.course import source_notebook
from autograde.reference import solution_code
from tests.support.integrity import GARBAGE
from tests.support.synthetic import completed_notebook

FIRST, FOURTH = "01-weighted-sum", "04-long-sequences"

# What chapter 4's reference scores with the memory bound broken.
HONEST_FULL_MATRIX = 9.0


def reference_cell(assignment: str, grade_id: str) -> str:
    """The reference solution of answer cell `grade_id`, as a perfect student writes it."""
    for cell in source_notebook(assignment).cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            return solution_code(cell.source)
    raise KeyError(grade_id)


def _garbage_with(prelude: str, first: str = "softmax") -> dict[str, str]:
    """Chapter 1's garbage answers, with `prelude` (defining ``_forge``) at the top of cell `first`."""
    cells = dict(GARBAGE)
    cells[first] = prelude + "\n" + cells[first]
    return cells


# Every answer returns an object whose __array__ walks up its callers' frames and hands the test its own expected
# value (expect_close's `expected`, a test's `oracle`), of the garbage's shape; else the garbage.
_FRAME_READER = '''import sys

import numpy as np


class _Sneaky:
    def __init__(self, fallback):
        self.fallback = np.asarray(fallback, dtype=float)

    def __array__(self, dtype=None, copy=None):
        frame = sys._getframe(1)
        while frame is not None:
            for name in ("expected", "oracle", "reference", "_oracle"):
                value = frame.f_locals.get(name)
                if value is None or isinstance(value, _Sneaky):
                    continue
                try:
                    found = np.asarray(value, dtype=float)
                except Exception:
                    continue
                if found.shape == self.fallback.shape:
                    return found if dtype is None else found.astype(dtype)
            frame = frame.f_back
        return self.fallback if dtype is None else self.fallback.astype(dtype)


def _forge():
    pass
'''


def _wrapped(cells: dict[str, str], wrap: str) -> dict[str, str]:
    """The garbage functions, each returning its garbage passed through function `wrap` (both parts of a tuple)."""
    out = {}
    for grade_id, code in cells.items():
        if "return " in code and grade_id not in ("temperature", "bandwidth"):
            head, _, value = code.rpartition("    return ")
            value = value.strip()
            if grade_id == "attention_pool":
                first, second = value.split("), np.zeros(")
                value = f"{wrap}({first})), {wrap}(np.zeros({second})"
            else:
                value = f"{wrap}({value})"
            code = f"{head}    return {value}\n"
        out[grade_id] = code
    return out


# It touches nothing of the grader's: on its first call inside a test it swaps the notebook's expect_close and
# expect_shape and NumPy's comparisons for ones that always pass, and a post_run_cell callback that removes itself
# puts them back before anyone looks.
_SWAPPER = '''import numpy

_real = {}


def _forge():
    shell = get_ipython()
    names = shell.user_ns
    if _real:
        return
    _real.update(expect_close=names.get("expect_close"), expect_shape=names.get("expect_shape"),
                 isclose=numpy.isclose, allclose=numpy.allclose)
    names["expect_close"] = lambda *args, **kwargs: None
    names["expect_shape"] = lambda *args, **kwargs: None
    numpy.isclose = lambda a, b, *args, **kwargs: numpy.ones(numpy.broadcast(numpy.asarray(a), numpy.asarray(b)).shape, bool)
    numpy.allclose = lambda *args, **kwargs: True

    def restore(*args):
        names["expect_close"], names["expect_shape"] = _real.pop("expect_close"), _real.pop("expect_shape")
        numpy.isclose, numpy.allclose = _real.pop("isclose"), _real.pop("allclose")
        shell.events.unregister("post_run_cell", restore)

    shell.events.register("post_run_cell", restore)
'''

# A top-level max that expect_close's max(atol, 1e-5) then calls for a float32 answer: every tolerance becomes 1e300.
_SHADOWS_MAX = '''def max(*args, **kwargs):
    return 1e300


def _f32(value):
    return np.asarray(value, dtype=np.float32)


def _forge():
    pass
'''

# The tests' hidden oracles and references, found in the notebook's globals, called in place of an answer.
_CALLS_ORACLES = '''def _forge():
    pass


def _oracle(name):
    found = globals().get(name)
    return found if callable(found) else None
'''

_ORACLE_ANSWERS = {
    "softmax": "def softmax(x, axis=-1):\n    o = _oracle('_softmax_oracle')\n"
               "    return o(x, axis) if o else np.ones_like(np.asarray(x, dtype=float))\n",
    "weighted_average": "def weighted_average(weights, values):\n    o = _oracle('_weighted_average_oracle')\n"
                        "    return o(weights, values) if o else np.zeros(np.shape(weights)[:-1] + np.shape(values)[1:])\n",
    "gaussian_scores": "def gaussian_scores(queries, keys, bandwidth):\n    o = _oracle('_gaussian_scores_oracle')\n"
                       "    return o(queries, keys, bandwidth) if o else np.ones((len(queries), len(keys)))\n",
    "attention_pool": "def attention_pool(queries, keys, values, score_fn):\n    o = _oracle('_attention_pool_oracle')\n"
                      "    return o(queries, keys, values, score_fn) if o else (np.zeros((len(queries), np.shape(values)[1])), "
                      "np.zeros((len(queries), len(keys))))\n",
    "nadaraya_watson": "def nadaraya_watson(x_query, x_train, y_train, bandwidth):\n    o = _oracle('_nadaraya_watson_oracle')\n"
                       "    return o(x_query, x_train, y_train, bandwidth) if o else np.zeros(np.shape(x_query))\n",
}

# Chapter 4: the whole score matrix, then tracemalloc's peak reset, so that a count inside the process sees little.
_RESETS_PEAK = '''import tracemalloc


def streaming_attention(Q, K, V, chunk_size):
    scores = np.asarray(Q, dtype=float) @ np.asarray(K, dtype=float).T / np.sqrt(np.shape(Q)[-1])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    out = (weights / weights.sum(axis=1, keepdims=True)) @ np.asarray(V, dtype=float)
    del scores, weights
    tracemalloc.reset_peak()
    return out
'''


def attack_submissions() -> dict[str, tuple[str, nbformat.NotebookNode]]:
    """{student: (assignment, notebook)} of the attacks, and plain garbage (what they are worth); each must score
    what its answers are worth."""
    return {
        "garbage": (FIRST, completed_notebook(FIRST, _garbage_with("def _forge():\n    pass\n"))),
        "reads-caller-frames": (FIRST, completed_notebook(FIRST, _wrapped(_garbage_with(_FRAME_READER), "_Sneaky"))),
        "swaps-comparisons-while-tested": (FIRST, completed_notebook(FIRST, _garbage_with(_SWAPPER))),
        "shadows-max": (FIRST, completed_notebook(FIRST, _wrapped(_garbage_with(_SHADOWS_MAX), "_f32"))),
        "calls-hidden-oracles": (FIRST, completed_notebook(FIRST, _garbage_with(_CALLS_ORACLES)
                                                          | {k: v if k != "softmax" else _CALLS_ORACLES + "\n" + v
                                                             for k, v in _ORACLE_ANSWERS.items()})),
        "resets-tracemalloc-peak": (FOURTH, completed_notebook(FOURTH, {"streaming_attention": _RESETS_PEAK})),
    }


# What each attack scored on main before the checker (graded there as here; `python -m autograde grade` of
# commit 2a6a62c), and what it is worth.
OLD_SCORES = {"reads-caller-frames": 23.0, "swaps-comparisons-while-tested": 22.0, "shadows-max": 21.0,
              "calls-hidden-oracles": 14.0, "resets-tracemalloc-peak": 11.0}
WORTH = {"reads-caller-frames": "garbage", "swaps-comparisons-while-tested": "garbage", "shadows-max": "garbage",
         "calls-hidden-oracles": "garbage", "resets-tracemalloc-peak": HONEST_FULL_MATRIX}


def hidden_only_names(assignment: str) -> set[str]:
    """Names of the hidden tests' own (``_...`` and ``check_...``) that neither the released notebook nor the
    grader's code in the kernel (its agent) mentions."""
    import re

    from autograde.course import EXERCISES, REPO, SOLUTIONS

    agent = "".join((REPO / "autograde" / "run" / name).read_text()
                    for name in ("frames.py", "wire.py", "probes.py", "agent.py"))

    source = (SOLUTIONS / assignment / f"{assignment}.py").read_text()
    released = (EXERCISES / assignment / f"{assignment}.ipynb").read_text()
    hidden = "".join(re.findall(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", source, re.DOTALL))
    return {name for name in re.findall(r"\b(?:_[A-Za-z]|check_)[A-Za-z0-9_]{6,}\b", hidden)
            if name not in released and name not in agent}


# For each chapter whose tests run in the checker, the answer a searching submission wraps: (grade id, function).
# (Not chapter 4: its hidden tests use no name of their own that its released notebook does not show.)
SEARCHED = {FIRST: ("softmax", "softmax"), "02-additive-attention": ("masked_softmax",) * 2,
            "03-self-attention": ("scaled_dot_product_attention",) * 2,
            # (Called after the tests of TinyGPT, which lend the tests' own TransformerBlock to the kernel.)
            "05-transformer": ("crossover_length",) * 2, "06-beyond-text": ("attention_rollout",) * 2,
            "07-backward-pass": ("softmax_backward",) * 2, "08-cheaper-attention": ("kv_cache_bytes",) * 2}


def searching_answer(assignment: str) -> tuple[str, str]:
    """(grade id, cell) of a correct answer that, on each call in a new cell, searches everything the kernel holds
    (its objects, the source of its cells and of every frame, its files in /tmp) for a name only the hidden tests
    of `assignment` use, and raises if it finds one; and raises too if it cannot find `expect_close` (the given
    helper), so the search is known to see. The names are carried as hashes, so the cell itself holds none."""
    import hashlib

    grade_id, function = SEARCHED[assignment]
    wanted = sorted(hashlib.sha256(n.encode()).hexdigest() for n in hidden_only_names(assignment))
    control = hashlib.sha256(b"expect_close").hexdigest()
    reference = reference_cell(assignment, grade_id).replace(f"def {function}(", f"def _reference_{function}(", 1)
    return grade_id, reference + f'''

import functools
import gc
import hashlib
import linecache
import os
import re
import sys
import types

_WANTED = set({wanted!r})
_CONTROL = {control!r}
_searched = {{}}


def _words_in(text, into):
    into.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]{{5,}}", text[:200000]))


def _kernel_words():
    words = set()
    # (The libraries' own module namespaces are left out: they are most of a torch kernel's objects, and a test
    # that entered the kernel would be in the notebook's namespace, its history, its frames or its functions.)
    libraries = {{id(vars(m)) for name, m in list(sys.modules.items()) if m is not None and name != "__main__"}}
    for obj in gc.get_objects():
        if isinstance(obj, dict) and id(obj) in libraries:
            continue
        if isinstance(obj, dict):
            for key, value in list(obj.items())[:5000]:
                for item in (key, value):
                    if isinstance(item, str):
                        _words_in(item, words)
        elif isinstance(obj, (list, tuple)):
            for item in obj[:5000]:
                if isinstance(item, str):
                    _words_in(item, words)
        elif isinstance(obj, types.FunctionType):
            code = obj.__code__
            words.update(code.co_names + code.co_varnames)
            for const in code.co_consts:
                if isinstance(const, str):
                    _words_in(const, words)
    for lines in list(linecache.cache.values()):
        if len(lines) > 2:
            _words_in("".join(lines[2] or ()), words)
    for frame in sys._current_frames().values():
        while frame is not None:
            words.update(frame.f_code.co_names + frame.f_code.co_varnames)
            words.update(k for k in list(frame.f_globals) if isinstance(k, str))
            frame = frame.f_back
    for root, _, files in os.walk("/tmp"):
        for name in files:
            try:
                with open(os.path.join(root, name), errors="replace") as f:
                    _words_in(f.read(200000), words)
            except OSError:
                pass
    return {{hashlib.sha256(w.encode()).hexdigest() for w in words}}


def _search():
    key = len(get_ipython().user_ns.get("In", ()))
    if key not in _searched:
        found = _kernel_words()
        _searched[key] = (bool(found & _WANTED), _CONTROL in found)
    hidden, control = _searched[key]
    if not control:
        raise RuntimeError("the search sees nothing: expect_close not found")
    if hidden:
        raise ValueError("a name of the hidden tests is in the kernel")


@functools.wraps(_reference_{function})
def {function}(*args, **kwargs):
    _search()
    return _reference_{function}(*args, **kwargs)
'''


def _with_reference(assignment: str, grade_id: str, before: str = "", after: str = "", edit=None) -> str:
    code = reference_cell(assignment, grade_id)
    if edit is not None:
        code = edit(code)
    return before + code + after


def honest_submissions() -> dict[str, tuple[str, nbformat.NotebookNode]]:
    """{student: (assignment, notebook)} of correct answers written in ways the guard in the kernel failed:
    each must keep full marks."""
    softmax = reference_cell(FIRST, "softmax")
    pooled = softmax.replace('def softmax(x, axis=-1):\n    """Softmax of `x` along `axis`; any shape in, the same shape out."""\n',
                             'def _softmax(x, axis=-1):\n')
    thread_pool = ("from concurrent.futures import ThreadPoolExecutor\n\n_pool = ThreadPoolExecutor(2)\n\n\n"
                   + pooled + "\n\ndef softmax(x, axis=-1):\n    return _pool.submit(_softmax, x, axis).result()\n")
    introspects = ("import gc\nimport inspect\n\n\n" + pooled
                   + "\n\ndef softmax(x, axis=-1):\n    depth = len(inspect.stack())\n    gc.collect()\n"
                     "    assert depth > 0\n    return _softmax(x, axis)\n")
    subclass = ("class Weights(np.ndarray):\n    pass\n\n\n" + pooled
                + "\n\ndef softmax(x, axis=-1):\n    return np.asarray(_softmax(x, axis)).view(Weights)\n")
    chatty = (pooled + "\n\ndef softmax(x, axis=-1):\n    for i in range(200):\n        print('softmax line', i)\n"
              "    return _softmax(x, axis)\n")
    shadows = "list = [1, 2, 3]\nmin = 0\n\n" + softmax
    # A helper of the student's own named like a variable a test cell assigns (test_softmax_stability's `shifted`).
    helper = ("def shifted(x, axis):\n    x = np.asarray(x, dtype=float)\n    top = np.max(x, axis=axis, keepdims=True)\n"
              "    return x - np.where(np.isfinite(top), top, 0.0)\n\n\ndef softmax(x, axis=-1):\n"
              "    e = np.exp(shifted(x, axis))\n    total = np.sum(e, axis=axis, keepdims=True)\n"
              "    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)\n")
    return {
        "keeps-a-thread-pool": (FIRST, completed_notebook(FIRST, {"softmax": thread_pool})),
        "inspects-the-stack": (FIRST, completed_notebook(FIRST, {"softmax": introspects})),
        "returns-an-ndarray-subclass": (FIRST, completed_notebook(FIRST, {"softmax": subclass})),
        "prints-200-lines-per-call": (FIRST, completed_notebook(FIRST, {"softmax": chatty})),
        "shadows-list-and-min": (FIRST, completed_notebook(FIRST, {"softmax": shadows})),
        "helper-named-like-a-tests-variable": (FIRST, completed_notebook(FIRST, {"softmax": helper})),
        **{f"searches-the-kernel-for-the-tests-{assignment[:2]}": (assignment, completed_notebook(
            assignment, dict([searching_answer(assignment)]))) for assignment in SEARCHED},
    }


HONEST_FULL = {FIRST: 23.0, "02-additive-attention": 14.0, "03-self-attention": 19.0, FOURTH: 11.0,
               "05-transformer": 17.0, "06-beyond-text": 18.0, "07-backward-pass": 19.0,
               "08-cheaper-attention": 21.0}
