"""Shared fixtures: every synthetic submission graded once, in one batch, by the real command."""
from __future__ import annotations

import csv
import hashlib
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograde.course import EXERCISES, REPO, SOLUTIONS, assignment_ids, source_notebook
from autograde.synthetic import completed_notebook, student_notebook

MUTANTS = Path(__file__).parent / "mutants"


def grade_cells(assignment: str) -> list[str]:
    """Grade ids of the autograded test cells of `assignment`, in notebook order."""
    return [
        c.metadata["nbgrader"]["grade_id"]
        for c in source_notebook(assignment).cells
        if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"
    ]


def solution_cells(assignment: str) -> list[str]:
    """Grade ids of the cells a student fills in."""
    return [
        c.metadata["nbgrader"]["grade_id"]
        for c in source_notebook(assignment).cells
        if c.metadata.get("nbgrader", {}).get("solution")
    ]


def cells_testing(grade_id: str, cells: list[str]) -> list[str]:
    """The test cells that belong to solution cell `grade_id`: test_<id> and test_<id>_<aspect>."""
    return [c for c in cells if c == f"test_{grade_id}" or c.startswith(f"test_{grade_id}_")]


def mutants() -> list[tuple[str, str, Path]]:
    """(assignment, grade_id, path) of every mutant under tests/mutants/<a>/<grade_id>/<name>.py."""
    return sorted((p.parent.parent.name, p.parent.name, p) for p in MUTANTS.glob("*/*/*.py"))


def mutant_student(assignment: str, grade_id: str, path: Path) -> str:
    """The student id a mutant is graded under."""
    return f"mutant--{grade_id}--{path.stem}"


def digest(*folders: Path) -> str:
    """A hash of the names and contents of every file under `folders`."""
    h = hashlib.sha256()
    for folder in folders:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                h.update(str(p).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def write(nb, folder: Path, student: str, assignment: str) -> None:
    target = folder / student / assignment / f"{assignment}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    """Grade the reference, the untouched notebook, every mutant and some broken submissions at once.

    Returns ``{"scores": {(student, assignment, grade_id): row}, "grades": {(student, assignment): row},
    "out": Path, "proc": CompletedProcess, "inputs_unchanged": bool}``.
    """
    base = tmp_path_factory.mktemp("grading")
    submissions, out = base / "submitted", base / "out"
    for assignment in assignment_ids():
        write(completed_notebook(assignment), submissions, "reference", assignment)
        write(student_notebook(assignment), submissions, "untouched", assignment)
    for assignment, grade_id, path in mutants():
        nb = completed_notebook(assignment, {grade_id: path.read_text()})
        write(nb, submissions, mutant_student(assignment, grade_id, path), assignment)
    first = assignment_ids()[0]
    (submissions / "no-notebook" / first).mkdir(parents=True)
    broken = submissions / "not-a-notebook" / first / f"{first}.ipynb"
    broken.parent.mkdir(parents=True)
    broken.write_text("this is not JSON")

    before = digest(SOLUTIONS, EXERCISES, submissions)
    proc = subprocess.run(
        [sys.executable, "-m", "autograde", "grade", str(submissions), "--out", str(out), "--quiet"],
        cwd=REPO, capture_output=True, text=True, timeout=1200,
    )
    assert proc.returncode == 0, f"autograde grade failed:\n{proc.stdout}\n{proc.stderr}"
    with open(out / "scores.csv", newline="") as f:
        scores = {(r["student_id"], r["assignment"], r["grade_id"]): r for r in csv.DictReader(f)}
    with open(out / "grades.csv", newline="") as f:
        grades = {(r["student_id"], r["assignment"]): r for r in csv.DictReader(f)}
    unchanged = digest(SOLUTIONS, EXERCISES, submissions) == before
    return {"scores": scores, "grades": grades, "out": out, "proc": proc, "inputs_unchanged": unchanged}
