"""Shared fixtures: every synthetic submission graded once, in one batch, by the real command."""
from __future__ import annotations

import csv
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from autograde.course import EXERCISES, REPO, SOLUTIONS, assignment_ids
from autograde.synthetic import completed_notebook, mutant_files, write_reference_class, write_submission

MUTANTS = Path(__file__).parent / "mutants"
CELL_TIMEOUT = 20  # seconds; the slowest reference cell (chapter 2's training) takes under 10


def odd_submissions(assignment: str) -> dict:
    """Submissions of chapter 1 that misbehave in the ways students' notebooks do, by student id."""
    reference = {c.metadata["nbgrader"]["grade_id"]: c for c in completed_notebook(assignment).cells
                 if c.metadata.get("nbgrader", {}).get("solution")}
    dot = reference["dot_scores"].source
    odd = {
        "syntax-error": {"dot_scores": "def dot_scores(queries, keys):\n    return queries @ keys.T +\n"},
        "prints-to-stderr": {"dot_scores": "import sys\nimport warnings\n" + dot.replace(
            "    return", "    print('debugging dot_scores', file=sys.stderr)\n"
                        "    warnings.warn('a harmless warning')\n    return", 1)},
        "infinite-loop": {"cosine_scores": "def cosine_scores(queries, keys):\n    while True:\n        pass\n"},
        "raises": {"gaussian_scores": "raise RuntimeError('my notebook is broken here')\n"},
        "kernel-dies": {"nadaraya_watson": "import os\nos._exit(1)\n"},
        # 6 GiB of address space, past the default 4 GiB limit (np.empty touches no memory, so this is safe anyway).
        "memory-hog": {"weighted_average": "def weighted_average(weights, values):\n"
                                           "    scratch = np.empty(6 * 2**30, dtype=np.uint8)\n"
                                           "    return np.asarray(weights) @ np.asarray(values)\n"},
    }
    return {student: completed_notebook(assignment, cells) for student, cells in odd.items()}


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
    for student, nb in odd_submissions(first).items():
        write_submission(nb, submissions, student, first)
    empty = submissions / "empty-file" / first / f"{first}.ipynb"
    empty.parent.mkdir(parents=True)
    empty.write_bytes(b"")

    before = digest(SOLUTIONS, EXERCISES, submissions)
    proc = subprocess.run(
        [sys.executable, "-m", "autograde", "grade", str(submissions), "--out", str(out), "--quiet",
         "--timeout", str(CELL_TIMEOUT)],
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
