"""Shared fixtures: every synthetic submission graded once, in one batch, by the real command."""
from __future__ import annotations

import csv
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from autograde.course import EXERCISES, REPO, SOLUTIONS, assignment_ids
from autograde.synthetic import mutant_files, write_reference_class

MUTANTS = Path(__file__).parent / "mutants"


def mutants() -> list[tuple[str, str, Path]]:
    """(assignment, grade_id, path) of every mutant under tests/mutants/<a>/<grade_id>/<name>.py."""
    return mutant_files(MUTANTS)


def digest(*folders: Path) -> str:
    """A hash of the names and contents of every file under `folders`."""
    h = hashlib.sha256()
    for folder in folders:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                h.update(str(p).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    """Grade the reference, the untouched notebook, every mutant and some broken submissions at once.

    Returns ``{"scores": {(student, assignment, grade_id): row}, "grades": {(student, assignment): row},
    "out": Path, "proc": CompletedProcess, "inputs_unchanged": bool}``.
    """
    base = tmp_path_factory.mktemp("grading")
    submissions, out = base / "submitted", base / "out"
    write_reference_class(submissions, assignment_ids(), MUTANTS)
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
    return {"scores": scores, "grades": grades, "out": out, "proc": proc, "inputs_unchanged": unchanged,
            "submissions": submissions}
