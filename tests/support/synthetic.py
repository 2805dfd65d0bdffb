"""Synthetic submissions: the student notebook completed with the reference, a mutant or an alternative.

Test scaffolding, not part of the grader: used by the tests (reference, untouched
notebook, mutants, alternatives) and by benchmarks (``python -m benchmarks.<name>``
from the repository root imports it as ``tests.support.synthetic``).
A mutant is a plausible wrong answer that must lose points; an alternative is a
correct answer written differently from the reference that must keep them all.
Both are files ``<folder>/<a>/<grade_id>/<name>.py`` in the same format.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat

from autograde.course import EXERCISES, source_notebook
from autograde.reference import solution_code

_PATCH = re.compile(r"^# replace: (.*)\n# with: ?(.*)$", re.MULTILINE)


def mutant_code(mutant: str, reference: str) -> str:
    """The cell source a mutant stands for.

    A mutant is either the whole replacement source of a solution cell, or a
    patch of the reference cell: pairs of lines ``# replace: OLD`` and
    ``# with: NEW`` (``\\n`` for a line break), each replacing every
    occurrence of OLD. A patch whose OLD is not in the reference is an error,
    so a mutant cannot silently stop meaning anything when the solution changes.
    """
    pairs = _PATCH.findall(mutant)
    code = reference if pairs else mutant
    for old, new in pairs:
        old, new = old.replace("\\n", "\n"), new.replace("\\n", "\n")
        if old not in code:
            raise ValueError(f"mutant patch does not apply: {old!r} is not in the reference cell")
        code = code.replace(old, new)
    return code


def student_notebook(assignment: str) -> nbformat.NotebookNode:
    """The released student notebook ``exercises/<a>/<a>.ipynb``, untouched."""
    return nbformat.read(EXERCISES / assignment / f"{assignment}.ipynb", as_version=4)


def completed_notebook(assignment: str, replacements: dict[str, str] | None = None) -> nbformat.NotebookNode:
    """The student notebook with every solution cell filled in.

    A cell whose grade id is a key of `replacements` gets that code instead of
    the reference solution (resolved with :func:`mutant_code`, so it may be a
    patch); that is how a mutant (a plausible wrong answer) becomes a submission.
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
            code = solution_code(reference[grade_id])
            cell.source = mutant_code(replacements[grade_id], code) if grade_id in replacements else code
    return nb


def mutant_files(mutants: Path) -> list[tuple[str, str, Path]]:
    """(assignment, grade_id, path) of every mutant file ``mutants/<a>/<grade_id>/<name>.py``, sorted."""
    return sorted((p.parent.parent.name, p.parent.name, p) for p in Path(mutants).glob("*/*/*.py"))


def mutant_student(grade_id: str, path: Path) -> str:
    """The student id under which the mutant at `path` (replacing cell `grade_id`) is graded."""
    return f"mutant--{grade_id}--{Path(path).stem}"


def alternative_student(grade_id: str, path: Path) -> str:
    """The student id under which the correct alternative at `path` (replacing cell `grade_id`) is graded."""
    return f"alternative--{grade_id}--{Path(path).stem}"


def write_submission(nb: nbformat.NotebookNode, folder: Path, student: str, assignment: str) -> Path:
    """Write `nb` where nbgrader's submitted layout expects it; returns the path."""
    target = Path(folder) / student / assignment / f"{assignment}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    return target


def write_reference_class(folder: Path, assignments: list[str], mutants: Path, alternatives: Path | None = None) -> None:
    """Fill `folder` with the submissions that test the grading of `assignments`.

    Student ``reference`` completes every notebook with the reference solution,
    ``untouched`` hands in the student notebooks as released, and each mutant
    under `mutants` (and each alternative under `alternatives`) is one student
    (see :func:`mutant_student`, :func:`alternative_student`) whose notebook is
    the reference except for the one cell the file replaces.
    """
    for assignment in assignments:
        write_submission(completed_notebook(assignment), folder, "reference", assignment)
        write_submission(student_notebook(assignment), folder, "untouched", assignment)
    variants = [(mutant_student, p) for p in mutant_files(mutants)]
    variants += [(alternative_student, p) for p in (mutant_files(alternatives) if alternatives else [])]
    for student_id, (assignment, grade_id, path) in variants:
        if assignment in assignments:
            nb = completed_notebook(assignment, {grade_id: path.read_text()})
            write_submission(nb, folder, student_id(grade_id, path), assignment)
