"""The reference solutions as importable code, for the book pages and benchmarks that need them.

It runs an assignment's setup and solution cells (not its test cells) from the
single source ``solutions/<a>/<a>.py``, so no second copy of a solution exists.
Only jupytext is needed, not nbgrader.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

import jupytext

from .cells import CellKind, cell_kind

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"
_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)


def solution_code(source: str) -> str:
    """A solution cell's source with the solution markers removed (what a perfect student writes)."""
    return _MARKER.sub("", source)


def reference_cells(assignment: str) -> list[tuple[str, str]]:
    """The code :func:`load_reference` runs for `assignment`, in order: (grade id or "?", code) of every answer
    cell (solution markers removed) and given cell; test cells are left out."""
    nb = jupytext.read(SOLUTIONS / assignment / f"{assignment}.py")
    return [(cell.metadata.get("nbgrader", {}).get("grade_id", "?"), solution_code(cell.source))
            for cell in nb.cells if cell_kind(cell) in (CellKind.ANSWER, CellKind.GIVEN)]


def load_reference(assignment: str, skip: tuple[str, ...] = ()) -> dict:
    """Run the non-test code cells of `assignment` with the solutions filled in; return their namespace.

    Cells whose grade id is in `skip` are not run (e.g. a long training run).
    """
    namespace: dict = {"__name__": f"reference_{assignment.replace('-', '_')}"}
    for grade_id, code in reference_cells(assignment):
        if grade_id not in skip:
            exec(compile(code, f"{assignment}:{grade_id}", "exec"), namespace)
    return namespace


# Helpers for the book's pages: each composes reference answers, so that a page can use what an exercise builds
# without its code appearing in the page's source (which the download button serves).


@functools.cache
def _chapter_1() -> dict:
    """Chapter 1's reference namespace, loaded once (its cells take a few seconds)."""
    return load_reference("01-weighted-sum")


def gaussian_weights(queries, keys, bandwidth):
    """The weights `(m, n)` of attention pooling with the Gaussian score: exercises 1.5 and 1.6 composed."""
    import numpy as np

    reference = _chapter_1()
    dummy_values = np.zeros((np.shape(keys)[0], 1))
    _, weights = reference["attention_pool"](queries, keys, dummy_values,
                                             lambda q, k: reference["gaussian_scores"](q, k, bandwidth))
    return weights


def numpy_attention():
    """Chapter 3's reference `scaled_dot_product_attention` with chapter 1's NumPy softmax in place of the given one.

    The notebook gives a softmax that wraps torch.softmax; tracemalloc sees only NumPy's allocations, so a page
    that measures the memory of attention uses this version, NumPy throughout.
    """
    chapter_3 = load_reference("03-self-attention")
    chapter_3["softmax"] = _chapter_1()["softmax"]
    return chapter_3["scaled_dot_product_attention"]
