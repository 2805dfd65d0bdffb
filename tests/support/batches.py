"""The classes of synthetic submissions the slow tests grade, one batch per chapter or purpose, and how to grade one.

Each batch is graded by the real command (``python -m autograde grade``) the
first time a test asks for it (conftest.py's fixtures), into a persistent
folder under :data:`CACHE` (git-ignored): the grader keeps every result there,
keyed by everything the grade depends on, so a rerun grades only what changed.

- ``chapter-<a>``: the reference, the untouched notebook, the notebooks of
  the correct alternatives (the k-th of every answer cell in one) and the
  sampled mutant of chapter `a` (every mutant's verdicts
  are decided in-process, tests/support/verdicts.py; these are what the
  agreement test compares them with);
- ``odd``: chapter 1's broken, damaged and hostile submissions, and one file
  that is not a notebook for every chapter (so the report covers them all);
- ``fresh``: the few chapter 1 submissions whose tests read what a run did
  (the executed notebooks, what escaped, which scratch folders were left),
  graded from nothing every run.
"""
from __future__ import annotations

import contextlib
import csv
import fcntl
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from autograde.course import EXERCISES, REPO, SOLUTIONS, assignment_ids
from tests.support.scratch import ScratchWatch, scratch_left
from tests.support.submissions import (
    TAMPERING,
    WRONG_SOFTMAX,
    alternative_groups,
    digest,
    format_damaged,
    odd_submissions,
    stealing_cell,
    structurally_damaged,
)
from tests.support.synthetic import (
    completed_notebook,
    mutant_student,
    student_notebook,
    write_submission,
)

CACHE = REPO / ".grading-cache"  # persistent between test runs; `rm -rf .grading-cache` grades everything again
CELL_TIMEOUT = 20  # seconds; the slowest reference cell (chapter 2's training) takes under 10
# Chapter 1's cells take well under a second each. Its odd batch holds an answer that loops forever, which every
# cell calling it spends in full: at 20 s that was 70 s of CPU, at this limit 20.
ODD_TIMEOUT = 6
JOBS = 2  # worker processes, forced: test_parallel_grading_equals_sequential needs a parallel batch
# A chapter's batch is graded one notebook at a time, each kernel on one thread: a second worker process imports the
# grader, makes its course and starts a checker again, about 8 s of CPU in chapter 5's batch (90 s with two workers,
# 82 s so), and the suite's other processes keep the cores busy anyway.
CHAPTER_JOBS, CHAPTER_OPTIONS = 1, ("--SandboxKernelManager.threads=1",)
STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
# Odd submissions whose tests read the executed notebook: graded in the fresh batch.
READ_EXECUTED = ("prints-to-stderr", "huge-output")


@dataclass
class Batch:
    """A graded batch: scores.csv and grades.csv by key, notes.csv, the folders, and what the run did."""

    scores: dict  # (student, assignment, grade_id) -> scores.csv row
    grades: dict  # (student, assignment) -> grades.csv row
    notes: dict  # (student, assignment) -> [note]
    out: Path
    submissions: Path
    proc: subprocess.CompletedProcess
    inputs_unchanged: bool  # solutions/, exercises/ and the submissions are byte for byte what they were
    extra: dict = field(default_factory=dict)

    def __getitem__(self, key: str):
        """The batch as the mapping the tests read (``graded["scores"]``)."""
        return self.extra[key] if key in self.extra else getattr(self, key)


def write_chapter(folder: Path, assignment: str, mutants: list[Path] = ()) -> None:
    """The reference, the untouched notebook, the notebooks of every alternative of `assignment`
    (:func:`tests.support.submissions.alternative_groups`) and the mutant files `mutants`."""
    write_submission(completed_notebook(assignment), folder, "reference", assignment)
    write_submission(student_notebook(assignment), folder, "untouched", assignment)
    for student, cells in alternative_groups(assignment).items():
        nb = completed_notebook(assignment, {grade_id: path.read_text() for grade_id, path in cells.items()})
        write_submission(nb, folder, student, assignment)
    for path in map(Path, mutants):
        nb = completed_notebook(assignment, {path.parent.name: path.read_text()})
        write_submission(nb, folder, mutant_student(path.parent.name, path), assignment)


def write_odd(folder: Path) -> None:
    """Chapter 1's odd, damaged and tampering submissions, beside its reference and untouched notebook."""
    first = assignment_ids()[0]
    write_submission(completed_notebook(first), folder, "reference", first)
    write_submission(student_notebook(first), folder, "untouched", first)
    (folder / "no-notebook" / first).mkdir(parents=True)
    for assignment in assignment_ids():  # (no kernel runs for these: every chapter is in the report at no cost)
        broken = folder / "not-a-notebook" / assignment / f"{assignment}.ipynb"
        broken.parent.mkdir(parents=True)
        broken.write_text("this is not JSON")
    for student, nb in odd_submissions(first).items():
        if student not in READ_EXECUTED:
            write_submission(nb, folder, student, first)
    for student, nb in structurally_damaged(first).items():
        write_submission(nb, folder, student, first)
    for student, text in format_damaged(first).items():
        (folder / student / first).mkdir(parents=True)
        (folder / student / first / f"{first}.ipynb").write_text(text)
    write_submission(completed_notebook(first, {"nadaraya_watson": STUB}), folder, "nadaraya-watson-undone", first)
    write_submission(completed_notebook(first, {"softmax": WRONG_SOFTMAX}), folder, "wrong-softmax", first)
    for student, cell in TAMPERING.items():
        write_submission(completed_notebook(first, {"softmax": cell}), folder, student, first)
    empty = folder / "empty-file" / first / f"{first}.ipynb"
    empty.parent.mkdir(parents=True)
    empty.write_bytes(b"")


def write_fresh(folder: Path, markers: list[Path], port: int) -> None:
    """The submissions whose tests read what this very run did, and what they are compared with.

    ``steals`` tries to read the solution, write each of `markers` and connect
    to 127.0.0.1:`port`; ``untouched-softmax-only`` scores what it would
    without stealing. Reference, untouched and wrong-softmax give two workers
    something to grade that a sequential regrade can compare.
    """
    first = assignment_ids()[0]
    write_submission(completed_notebook(first), folder, "reference", first)
    write_submission(student_notebook(first), folder, "untouched", first)
    write_submission(completed_notebook(first, {"softmax": WRONG_SOFTMAX}), folder, "wrong-softmax", first)
    write_submission(completed_notebook(first, {"softmax": STUB}), folder, "untouched-softmax-only", first)
    for student, nb in odd_submissions(first).items():
        if student in READ_EXECUTED:
            write_submission(nb, folder, student, first)
    cell = stealing_cell(SOLUTIONS / first / f"{first}.py", markers, port)
    write_submission(completed_notebook(first, {"softmax": cell}), folder, "steals", first)


@contextlib.contextmanager
def locked(folder: Path):
    """Hold `folder`'s lock: two test runs on one checkout never grade into the same cached folder at once."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def grade(submissions: Path, out: Path, *options: str, timeout: int = CELL_TIMEOUT, jobs: int = JOBS) -> Batch:
    """Grade `submissions` into `out` with the real command (`timeout` seconds per cell, `jobs` workers, and
    `options`), and read what it wrote."""
    before = digest(SOLUTIONS, EXERCISES, submissions)
    proc = subprocess.run(
        [sys.executable, "-m", "autograde", "grade", str(submissions), "--out", str(out), "--quiet",
         "--timeout", str(timeout), "--jobs", str(jobs), *options],
        cwd=REPO, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, f"autograde grade failed:\n{proc.stdout}\n{proc.stderr}"
    with open(out / "scores.csv", newline="") as f:
        scores = {(r["student_id"], r["assignment"], r["grade_id"]): r for r in csv.DictReader(f)}
    with open(out / "grades.csv", newline="") as f:
        grades = {(r["student_id"], r["assignment"]): r for r in csv.DictReader(f)}
    notes: dict = {}
    with open(out / "notes.csv", newline="") as f:
        for r in csv.DictReader(f):
            notes.setdefault((r["student_id"], r["assignment"]), []).append(r["note"])
    return Batch(scores, grades, notes, out, submissions, proc, digest(SOLUTIONS, EXERCISES, submissions) == before)


def grade_cached(name: str, write, scratch: Path, timeout: int = CELL_TIMEOUT, jobs: int = JOBS,
                 options: tuple[str, ...] = ()) -> Batch:
    """Write batch `name`'s submissions (by calling `write(folder)`) under `scratch` and grade them into the cached
    folder ``CACHE/name``: what an earlier run graded with the same notebook, exercise, settings and grader is
    reused. Kernels keep their scratch folders under `scratch` too; `timeout` is the limit per cell, `jobs` the
    worker processes, and `options` go on the command line."""
    shutil.rmtree(scratch / name, ignore_errors=True)  # (what a failed attempt of this process wrote)
    submissions, kernels = scratch / name / "submitted", scratch / name / "kernels"
    write(submissions)
    kernels.mkdir()
    with locked(CACHE / name):
        return grade(submissions, CACHE / name / "out", "--scratch", str(kernels), *options, timeout=timeout,
                     jobs=jobs)


def grade_fresh(scratch: Path) -> Batch:
    """Grade the fresh batch from nothing, and record whether the stealing submission got anywhere."""
    submissions, out = scratch / "fresh" / "submitted", scratch / "fresh" / "out"
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    markers = [REPO / "written-by-a-submission", submissions / "written-by-a-submission",
               out.parent / "written-by-a-submission",
               Path(tempfile.gettempdir()) / f"written-by-a-submission-{os.getpid()}"]
    write_fresh(submissions, markers, listener.getsockname()[1])
    kernels = scratch / "fresh" / "kernels"  # this run's own scratch base: other gradings on the machine use theirs
    kernels.mkdir()
    with ScratchWatch(kernels) as watch:
        batch = grade(submissions, out, "--scratch", str(kernels))
    try:
        listener.accept()
        connected = True
    except BlockingIOError:
        connected = False
    listener.close()
    written = [str(m) for m in markers if m.exists()]
    batch.extra = {"escaped": {"connected": connected, "written": written},
                   "scratch_made": sorted(watch.seen[kernels]), "scratch_left_behind": scratch_left(kernels)}
    return batch

