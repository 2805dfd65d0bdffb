"""What a cell of a course notebook is, by its nbgrader metadata: the one definition every step of grading uses.

nbgrader marks the student's cells ``solution`` and the autograded tests ``grade`` (with points). A cell marked
both is nbgrader's manually graded answer, which this course does not use: it is an answer here, never a test, so
every step (what runs in the checker, which cells score, what the outline and Gradescope call a test) agrees.
"""
from __future__ import annotations

from enum import StrEnum


class CellKind(StrEnum):
    """The kinds of cells of an exercise notebook."""

    ANSWER = "answer"  # nbgrader's solution cell: the student's code
    TEST = "test"  # graded and not a solution: an autograded test cell (visible and hidden tests)
    GIVEN = "given"  # any other code cell: the instructor's, run as given
    TEXT = ""  # markdown or raw


def cell_kind(cell) -> CellKind:
    """The kind of `cell` (a notebook cell, as nbformat gives it or as a plain dict)."""
    if cell.get("cell_type") != "code":
        return CellKind.TEXT
    nbgrader = (cell.get("metadata") or {}).get("nbgrader") or {}
    if nbgrader.get("solution"):
        return CellKind.ANSWER
    return CellKind.TEST if nbgrader.get("grade") else CellKind.GIVEN
