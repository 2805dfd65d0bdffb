"""What a cell of a course notebook is, by its nbgrader metadata: the one definition every step of grading uses.

nbgrader marks the student's cells ``solution`` and the autograded tests ``grade`` (with points). A cell marked
both is nbgrader's manually graded answer, which this course does not use: it is an answer here, never a test, so
every step (what runs in the checker, which cells score, what the outline and Gradescope call a test) agrees.
"""
from __future__ import annotations

import re
from enum import StrEnum


class CellKind(StrEnum):
    """The kinds of cells of an exercise notebook."""

    ANSWER = "answer"  # nbgrader's solution cell: the student's code
    TEST = "test"  # graded and not a solution: an autograded test cell (visible and hidden tests)
    GIVEN = "given"  # any other code cell: the instructor's, run as given
    TEXT = ""  # markdown or raw


HIDDEN_MARK = "### BEGIN HIDDEN TESTS"  # nbgrader's marker of the lines released notebooks leave out


def holds_hidden_tests(cell) -> bool:
    """Whether `cell` (of the instructor's notebook) is a test cell holding hidden tests: the one definition the
    feedback pages and Gradescope use, whatever its heading comment says ("Visible and hidden tests: ...")."""
    return cell_kind(cell) == CellKind.TEST and HIDDEN_MARK in (cell.get("source") or "")


_HIDDEN_BLOCK = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", re.DOTALL)


def visibility(cell) -> str:
    """Which lines of a test cell (of the instructor's notebook) the released notebook shows: "visible" (all),
    "hidden" (none but comments) or "visible and hidden"; the words the feedback page uses."""
    source = cell.get("source") or ""
    if not holds_hidden_tests(cell):
        return "visible"
    shown = [line for line in _HIDDEN_BLOCK.sub("", source).splitlines() if line.strip() and
             not line.strip().startswith("#")]
    return "visible and hidden" if shown else "hidden"


def cell_kind(cell) -> CellKind:
    """The kind of `cell` (a notebook cell, as nbformat gives it or as a plain dict)."""
    if cell.get("cell_type") != "code":
        return CellKind.TEXT
    nbgrader = (cell.get("metadata") or {}).get("nbgrader") or {}
    if nbgrader.get("solution"):
        return CellKind.ANSWER
    return CellKind.TEST if nbgrader.get("grade") else CellKind.GIVEN
