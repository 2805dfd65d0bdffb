"""Shared fixtures: every synthetic submission graded once, in one batch, by the real command.

Only fixtures (and the check that tests using them are marked) live here; what
they grade is made by tests/support/.
"""
from __future__ import annotations

import csv
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograde.course import EXERCISES, REPO, SOLUTIONS, assignment_ids
from tests.support.commands import repo_copy
from tests.support.submissions import (
    ALTERNATIVES,
    MUTANTS,
    TAMPERING,
    WRONG_SOFTMAX,
    digest,
    format_damaged,
    odd_submissions,
    stealing_cell,
    structurally_damaged,
)
from tests.support.synthetic import completed_notebook, write_reference_class, write_submission

CELL_TIMEOUT = 20  # seconds; the slowest reference cell (chapter 2's training) takes under 10
BATCH_JOBS = 2  # worker processes of the batch, forced (see `graded`)
HTML = REPO / "_build" / "html"
JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"


@pytest.fixture(scope="session")
def book():
    """Build the book as `make book` does (strict, cached execution) and return the HTML folder.

    Session-wide: the book tests and the browser tests share one build.
    """
    proc = subprocess.run([str(JUPYTER_BOOK), "build", ".", "-W", "-n", "--keep-going"],
                          cwd=REPO, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, f"the book does not build strictly:\n{proc.stdout[-5000:]}\n{proc.stderr[-5000:]}"
    return HTML


def pytest_collection_modifyitems(items):
    """A test that uses the graded class is slow and runs student code in the sandbox: it must say so.

    Markers are what `pytest -m "not slow"` selects on, so a missing one would
    put minutes into the quick run; this makes forgetting one an error at once.
    """
    unmarked = [item.nodeid for item in items if "graded" in getattr(item, "fixturenames", ())
                and not {"slow", "sandbox"} <= {m.name for m in item.iter_markers()}]
    if unmarked:
        raise pytest.UsageError("tests that use the `graded` fixture must be marked slow and sandbox: "
                                + ", ".join(unmarked[:5]))


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    """Grade the reference, the untouched notebook, every mutant and alternative and some broken submissions at once.

    Returns ``{"scores": {(student, assignment, grade_id): row}, "grades": {(student, assignment): row},
    "out": Path, "proc": CompletedProcess, "inputs_unchanged": bool, "notes": {(student, assignment): [note]},
    "escaped": {"connected": bool, "written": [path]}}``: whether the stealing submission reached the network or
    wrote any of its marker files.
    """
    base = tmp_path_factory.mktemp("grading")
    submissions, out = base / "submitted", base / "out"
    write_reference_class(submissions, assignment_ids(), MUTANTS, ALTERNATIVES)
    first = assignment_ids()[0]
    (submissions / "no-notebook" / first).mkdir(parents=True)
    broken = submissions / "not-a-notebook" / first / f"{first}.ipynb"
    broken.parent.mkdir(parents=True)
    broken.write_text("this is not JSON")
    for student, nb in odd_submissions(first).items():
        write_submission(nb, submissions, student, first)
    for student, nb in structurally_damaged(first).items():
        write_submission(nb, submissions, student, first)
    for student, text in format_damaged(first).items():
        (submissions / student / first).mkdir(parents=True)
        (submissions / student / first / f"{first}.ipynb").write_text(text)
    stub = "# YOUR CODE HERE\nraise NotImplementedError()"
    write_submission(completed_notebook(first, {"softmax": stub}), submissions, "untouched-softmax-only", first)
    write_submission(completed_notebook(first, {"nadaraya_watson": stub}), submissions, "nadaraya-watson-undone", first)
    write_submission(completed_notebook(first, {"softmax": WRONG_SOFTMAX}), submissions, "wrong-softmax", first)
    for student, cell in TAMPERING.items():
        write_submission(completed_notebook(first, {"softmax": cell}), submissions, student, first)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    markers = [REPO / "written-by-a-submission", submissions / "written-by-a-submission",
               out.parent / "written-by-a-submission", Path(tempfile.gettempdir()) / f"written-by-a-submission-{os.getpid()}"]
    cell = stealing_cell(SOLUTIONS / first / f"{first}.py", markers, listener.getsockname()[1])
    write_submission(completed_notebook(first, {"softmax": cell}), submissions, "steals", first)
    empty = submissions / "empty-file" / first / f"{first}.ipynb"
    empty.parent.mkdir(parents=True)
    empty.write_bytes(b"")

    before = digest(SOLUTIONS, EXERCISES, submissions)
    scratch_before = set(Path(tempfile.gettempdir()).glob("ag-*"))
    # Two workers whatever the machine: test_parallel_grading_equals_sequential compares this parallel batch with
    # a sequential regrade, which on a one-core machine (where the default is one job) would compare nothing.
    proc = subprocess.run(
        [sys.executable, "-m", "autograde", "grade", str(submissions), "--out", str(out), "--quiet",
         "--timeout", str(CELL_TIMEOUT), "--jobs", str(BATCH_JOBS)],
        # About 20 minutes on two idle cores; on a shared machine it took longer than the 20-minute limit this had.
        cwd=REPO, capture_output=True, text=True, timeout=3600,
    )
    assert proc.returncode == 0, f"autograde grade failed:\n{proc.stdout}\n{proc.stderr}"
    with open(out / "scores.csv", newline="") as f:
        scores = {(r["student_id"], r["assignment"], r["grade_id"]): r for r in csv.DictReader(f)}
    with open(out / "grades.csv", newline="") as f:
        grades = {(r["student_id"], r["assignment"]): r for r in csv.DictReader(f)}
    unchanged = digest(SOLUTIONS, EXERCISES, submissions) == before
    try:
        listener.accept()
        connected = True
    except BlockingIOError:
        connected = False
    listener.close()
    written = [str(m) for m in markers if m.exists()]
    left_behind = sorted(str(p) for p in set(Path(tempfile.gettempdir()).glob("ag-*")) - scratch_before)
    with open(out / "notes.csv", newline="") as f:
        notes = {}
        for r in csv.DictReader(f):
            notes.setdefault((r["student_id"], r["assignment"]), []).append(r["note"])
    return {"scores": scores, "grades": grades, "out": out, "proc": proc, "inputs_unchanged": unchanged,
            "submissions": submissions, "notes": notes, "escaped": {"connected": connected, "written": written},
            "scratch_left_behind": left_behind}


@pytest.fixture(scope="session")
def compiled_course(tmp_path_factory):
    """A copy of the course in which `python -m autograde compile` (what `make exercises` runs) wrote everything.

    The copy's exercises/ is removed first, so every student notebook there was
    written by the command; the repository itself must not change.
    """
    course = repo_copy(tmp_path_factory.mktemp("course"))
    shutil.rmtree(course / "exercises")
    watched = (SOLUTIONS, EXERCISES, REPO / "course" / "source")  # (course/source/: what `make exercises` writes)
    before = digest(*watched)
    proc = subprocess.run([sys.executable, "-m", "autograde", "compile"], cwd=course, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, f"python -m autograde compile failed:\n{proc.stdout}\n{proc.stderr}"
    assert digest(*watched) == before, "compiling in a copy changed the repository"
    wrote = set(proc.stdout.split())
    for assignment in assignment_ids():
        for folder in ("exercises", "course/source"):
            path = course / folder / assignment / f"{assignment}.ipynb"
            assert str(path) in wrote and path.is_file(), f"compile did not write {path}:\n{proc.stdout}"
    return course


def pytest_collection_finish(session):
    """Tests marked `sandbox` need bubblewrap: without `bwrap` on PATH they are skipped, saying how to install it;
    on CI (the environment variable CI set, as .ci/run does) a missing bwrap is an error instead, never a skip."""
    needing = [item for item in session.items if item.get_closest_marker("sandbox")]
    if not needing or shutil.which("bwrap"):
        return
    if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
        raise pytest.UsageError(f"bubblewrap (bwrap) is not on PATH, and {len(needing)} selected test(s) marked "
                                "`sandbox` need it: on CI they must run, not be skipped (install it: "
                                "`apt-get install bubblewrap`)")
    skip = pytest.mark.skip(reason="bubblewrap (bwrap) is not installed: `sudo apt-get install bubblewrap` "
                                   "(Debian/Ubuntu) to run the tests that grade in its sandbox")
    for item in needing:
        item.add_marker(skip)
