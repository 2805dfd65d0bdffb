"""Classify an executed notebook's test cells: one :class:`Status` and one message per cell, and notes.

The inputs are the points nbgrader's gradebook gave each test cell and the
executed notebook, in which :mod:`autograde.run.execute` recorded, as metadata,
what happened to each cell (killed, timed out, cut short). The status is
read from that record and from the type of the exception a cell raised, never
from text the grader wrote into an output.

A test cell of the course runs in the checker, whose verdict the execute step
turns into the cell's error output; the student's kernel never holds a test,
so nothing it says can carry one. The message of an exception the student's
own code raised is cut to its first line (:data:`STUDENT_MESSAGE_CHARS`
characters at most), shown with the student's own line; a note on a dead
kernel names the cause in the grader's words (:data:`DEATHS`), never its log.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from enum import StrEnum

import nbformat

from ..cells import CellKind, cell_kind
from ..course import source_notebook
from ..run.records import Event, Failure, events
from ..text import first_line
from .tracebacks import graders_own_verdict, student_frame

# The message of an exception raised by the student's own code: its first line, at most this long.
STUDENT_MESSAGE_CHARS = 300
# A test's own message (several lines when it gives several), at most this long.
TEST_MESSAGE_CHARS = 3000


class Status(StrEnum):
    """How one test cell of one submission fared: the ``status`` column of scores.csv."""

    PASSED = "passed"
    FAILED = "failed"  # a test's assertion
    ERROR = "error"  # any other exception; a file that holds no notebook; the grader failed on it
    TIMEOUT = "timeout"  # a cell ran past the time limit and was interrupted
    CRASHED = "crashed"  # the kernel died in this cell
    MISSING = "missing"  # no notebook, or the test cell is not in it

    @property
    def meaning(self) -> str:
        """What the status means, in words for students and instructors."""
        return _MEANING[self]

    @property
    def is_problem(self) -> bool:
        """Whether the instructor should look: not a plain pass or a test's verdict on the answer."""
        return self not in (Status.PASSED, Status.FAILED)


_MEANING = {
    Status.PASSED: "all points",
    Status.FAILED: "a test found a mistake",
    Status.ERROR: "the code raised an error or could not run",
    Status.TIMEOUT: "a cell ran past the time limit",
    Status.CRASHED: "the kernel died (os._exit, a crash or memory)",
    Status.MISSING: "no notebook was handed in",
}


@dataclass
class CellResult:
    """One row of scores.csv: how one test cell of one submission fared."""

    student_id: str
    assignment: str
    grade_id: str
    score: float
    max_score: float
    status: Status
    message: str  # one line, for the tables
    details: str = ""  # the test's whole message (several lines when it gave several), for the student's feedback
    where: str = ""  # the student's own line an error came from ("cell 'softmax', line 3: ..."), if any

    def __post_init__(self):
        self.status = Status(self.status)  # (rows read back from the cache hold the status as text)


@dataclass
class Graded:
    """What grading one submission gives: its rows of scores.csv and notes on what was repaired or flagged."""

    rows: list[CellResult]
    notes: list[str] = field(default_factory=list)
    keep: bool = True  # False when the grader itself failed: the next run tries again


@functools.cache
def graded_cells(assignment: str) -> tuple[tuple[str, float], ...]:
    """(grade_id, points) of every autograded test cell of `assignment`, in notebook order."""
    return tuple((c.metadata["nbgrader"]["grade_id"], float(c.metadata["nbgrader"].get("points", 0)))
                 for c in source_notebook(assignment).cells
                 if cell_kind(c) == CellKind.TEST)


def same_for_all(student: str, assignment: str, status: Status, message: str) -> list[CellResult]:
    """Rows giving every test cell of `assignment` `status`, `message` and no points (a notebook not graded)."""
    return [CellResult(student, assignment, g, 0.0, m, status, message) for g, m in graded_cells(assignment)]


def timed_out(notebook) -> bool:
    """Whether any cell of an executed notebook was interrupted at the per-cell time limit."""
    return any(Event.TIMED_OUT in events(c) for c in notebook.cells)


def _shown(value: str, by_student: bool) -> str:
    """An exception's message as a student may see it: cut (to its first line if the student's)."""
    value = str(value).strip()
    if by_student:
        return first_line(value)[:STUDENT_MESSAGE_CHARS]
    return value[:TEST_MESSAGE_CHARS]


def _first_error(cell):
    return next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)


def error_details(cell, notebook: nbformat.NotebookNode | None = None) -> tuple[str, str]:
    """(the message, the student's own frame) of the first exception an executed cell shows; ("", "") if none.

    A test's own message is shown in full (at most :data:`TEST_MESSAGE_CHARS`
    characters); the message of any other exception (the student's code on
    the way to it, or a library: :func:`autograde.results.tracebacks.graders_own_verdict`),
    only its first line (at most :data:`STUDENT_MESSAGE_CHARS`). The frame is the last one in a
    cell the student wrote (:mod:`autograde.results.tracebacks`); the frame, and whose
    the exception is, are known only when `notebook`, the executed notebook, is
    given (without it, the message counts as the student's).
    """
    output = _first_error(cell)
    if output is None:
        return "", ""
    traceback = output.get("traceback", [])
    # Only the grader's cells on the way from the test to the raise make it the test's verdict: a student frame
    # anywhere (their function calling the test's own helper) or a library's (their code under a library's name)
    # makes the message the student's.
    by_student = notebook is None or not graders_own_verdict(notebook, traceback)
    frame = student_frame(notebook, traceback) if notebook is not None else None
    return _shown(output.get("evalue", ""), by_student), str(frame) if frame else ""


def classify_cell(cell, notebook_timed_out: bool = False) -> tuple[Status, str] | None:
    """(status, message) for an executed test cell that did not earn its points; None if it shows no failure.

    What the execute step recorded decides first; then the first exception the
    cell shows: ``AssertionError`` is a test's verdict (failed), anything else
    an error. After a timeout in an earlier cell (as the execute step recorded
    it, never read from an exception's name), an error is most likely its
    consequence (a name never defined), so it counts as a timeout. The message
    is one line.
    """
    happened = events(cell)
    if Event.KILLED in happened:
        return Status.CRASHED, ("the kernel died while running this cell (os._exit, a crash or running out of memory);"
                                " the rest was graded without it")
    if Event.TIMED_OUT in happened:
        limit = happened[Event.TIMED_OUT].get("notebook_timeout")
        if limit is not None:  # (the notebook's whole time ran out before this cell, or while it ran)
            return Status.TIMEOUT, f"the notebook's time limit ({limit} s) ran out before this cell finished"
        if happened[Event.TIMED_OUT].get("stuck"):
            return Status.TIMEOUT, ("the cell ran longer than the time limit and did not stop when interrupted; its "
                                    "kernel was stopped and the rest was graded without it")
        return Status.TIMEOUT, "the cell ran longer than the time limit and was interrupted"
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            name = first_line(str(output.get("ename", "Error")))[:100] or "Error"
            value = first_line(str(output.get("evalue", "")))[:STUDENT_MESSAGE_CHARS]
            if name == "AssertionError":
                return Status.FAILED, f"{name}: {value}" if value else name
            if name == "NotImplementedError":
                message = "NotImplementedError: not done yet (replace raise NotImplementedError() with your code)"
            else:
                message = f"{name}: {value}" if value else name
            if notebook_timed_out:
                return Status.TIMEOUT, f"an earlier cell ran longer than the time limit; then {message}"
            return Status.ERROR, message
    return None


def cell_results(student: str, assignment: str, executed: nbformat.NotebookNode,
                 scores: dict[str, float]) -> list[CellResult]:
    """The rows of one autograded submission.

    `scores` maps each test cell's grade id to the points nbgrader's gradebook
    gave it (a cell absent from it is ``missing``); `executed` is the notebook
    as nbgrader executed it, with the execute step's record in its cells.
    """
    by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in executed.cells}
    notebook_timed_out = timed_out(executed)
    rows = []
    for grade_id, max_score in graded_cells(assignment):
        if grade_id not in scores:
            rows.append(CellResult(student, assignment, grade_id, 0.0, max_score, Status.MISSING,
                                   "the test cell is not in the graded notebook"))
            continue
        score = scores[grade_id]
        failure = classify_cell(by_id[grade_id], notebook_timed_out) if grade_id in by_id else None
        details = where = ""
        if score >= max_score:
            status, message = Status.PASSED, ""
        elif failure is not None:
            status, message = failure
            details, where = error_details(by_id[grade_id], executed)
        else:
            status, message = Status.FAILED, "scored less than full marks"
        rows.append(CellResult(student, assignment, grade_id, score, max_score, status, message, details, where))
    return rows


def graders_fault(failure: Failure | None) -> bool:
    """Whether the execute step's recorded failure is the grader's own: its agent or checker did not start for a
    kernel, or its checker failed (the result is not kept: the next run grades the notebook again)."""
    return failure in (Failure.AGENT_NOT_STARTED, Failure.CHECKER)


def autograde_failure(failure: Failure | None, log: str) -> tuple[Status, str]:
    """(status, message) for a notebook ``nbgrader autograde`` could not grade: the status from the failure the
    execute step recorded (:func:`autograde.run.records.failures_recorded`), never from the log's text, which the
    student's code can write; the log gives only an unforeseen error's detail."""
    if graders_fault(failure):
        return Status.ERROR, ("the grader could not start its checks in this notebook's kernel (a very busy machine?); "
                              "this is not a mark of your work: grade it again")
    if failure == Failure.TIMEOUT:
        return Status.TIMEOUT, "the notebook did not finish within the time limit"
    if failure == Failure.DEAD_KERNEL:
        return Status.CRASHED, "the notebook's kernel died (a crash, os._exit or running out of memory)"
    # The most informative line is the last 'SomeError: message' of nbgrader's traceback.
    raised = [line.strip() for line in log.splitlines() if re.match(r"\s*[\w.]*(Error|Exception)\b.*:", line)]
    detail = raised[-1] if raised else first_line(log)
    return Status.ERROR, f"nbgrader could not grade this notebook: {detail[:300]}"


def _cell_name(notebook: nbformat.NotebookNode, index: int) -> str:
    return notebook.cells[index].metadata.get("nbgrader", {}).get("grade_id") or f"number {index + 1}"


# What a dead kernel's log may show, and the grader's own words for it: a note names the cause, never quotes the log
# (a student's code writes that log, and could write the hidden tests there in any disguise). The log itself stays
# beside the executed notebook (kernel.log), for the instructor.
DEATHS = (("MemoryError", "it ran out of memory"), ("Cannot allocate memory", "it ran out of memory"),
          ("bad_alloc", "it ran out of memory"),
          ("Segmentation fault", "a Segmentation fault (a crash in compiled code)"),
          ("Bus error", "a Bus error (a crash in compiled code)"),
          ("Aborted", "an abort in compiled code"), ("Fatal Python error", "a fatal error of the Python interpreter"))


def death_cause(last_words: str) -> str:
    """The grader's words for why a kernel died, from what its log's last lines show ('' where none is recognised):
    the most specific marker found, in DEATHS' order (a C++ bad_alloc over the abort it causes, a segmentation fault
    over the "Fatal Python error" that reports it)."""
    return next((cause for marker, cause in DEATHS if marker in (last_words or "")), "")


def execution_notes(executed: nbformat.NotebookNode) -> list[str]:
    """Notes on what the execute step recorded in an executed notebook: dead kernels and what killed them (in the grader's words), answer cells stopped at the time limit, the notebook's time running
    out, cut outputs."""
    notes, cut, out_of_time = [], 0, False
    for index, cell in enumerate(executed.cells):
        happened = events(cell)
        if Event.KILLED in happened:
            cause = death_cause(happened[Event.KILLED].get("last_words", ""))
            notes.append(f"The kernel died in cell {_cell_name(executed, index)} ("
                         + (f"its log shows {cause}" if cause else "a crash, os._exit or running out of memory")
                         + "): that cell was skipped and the rest of your notebook graded without it.")
        limit = happened.get(Event.TIMED_OUT, {}).get("notebook_timeout")
        if limit is not None:
            if not out_of_time:  # once, at the first cell it stopped
                notes.append(f"Your notebook ran past its whole time limit ({limit} s): cell "
                             f"{_cell_name(executed, index)} and the cells after it were not run and scored nothing.")
            out_of_time = True
        elif (Event.TIMED_OUT in happened and happened[Event.TIMED_OUT].get("stuck")
              and cell_kind(cell) != CellKind.TEST):
            notes.append(f"Cell {_cell_name(executed, index)} ran past its time limit and did not stop when "
                         "interrupted: its kernel was stopped, and the rest of your notebook was graded without that "
                         "cell (what it would have defined is missing).")
        elif Event.TIMED_OUT in happened and cell_kind(cell) != CellKind.TEST:
            # (a test cell's timeout is its status, not a note)
            notes.append(f"Cell {_cell_name(executed, index)} was stopped at the time limit before it finished: "
                         "what it had defined by then was kept, and the tests ran on that.")
        cut += Event.CUT_SHORT in happened
    if cut:
        notes.append(f"The output of {cut} of your cell(s) was cut short because it was too long (this costs no points).")
    return notes
