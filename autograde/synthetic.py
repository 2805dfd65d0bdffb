"""Synthetic submissions: the student notebook completed with the reference, or with a mutant.

Used by the tests (reference, untouched notebook, mutants) and by benchmarks.
"""
from __future__ import annotations

import re

import nbformat

from .course import EXERCISES, source_notebook

_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)


def solution_code(source: str) -> str:
    """A solution cell's source with the solution markers removed (what a perfect student writes)."""
    return _MARKER.sub("", source)


def student_notebook(assignment: str) -> nbformat.NotebookNode:
    """The released student notebook ``exercises/<a>/<a>.ipynb``, untouched."""
    return nbformat.read(EXERCISES / assignment / f"{assignment}.ipynb", as_version=4)


def completed_notebook(assignment: str, replacements: dict[str, str] | None = None) -> nbformat.NotebookNode:
    """The student notebook with every solution cell filled in.

    A cell whose grade id is a key of `replacements` gets that code instead of
    the reference solution; that is how a mutant (a plausible wrong answer)
    becomes a submission.
    """
    replacements = dict(replacements or {})
    reference = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in source_notebook(assignment).cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    unknown = set(replacements) - set(reference)
    if unknown:
        raise KeyError(f"{assignment} has no solution cell with grade id {sorted(unknown)}")
    nb = student_notebook(assignment)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in reference:
            cell.source = replacements.get(grade_id, solution_code(reference[grade_id]))
    return nb
