"""What the execute step records about a notebook's cells and about its own failures, as data.

A cell's record is ``cell.metadata["autograde"]`` (:func:`record`,
:func:`events`): the kernel died in it, it was timed out (or not run past the
notebook's time limit), its output was cut. A failure of the whole step (the
grader's agent or checker did not start or broke, a time limit no rerun kept
to, a kernel that died outside any cell) is a :class:`Failure` that
:func:`failures_recorded` collects. :mod:`autograde.results.classify` reads
both, never the outputs' text, which student code can write.
"""
from __future__ import annotations

import contextlib
from enum import StrEnum

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode

__all__ = ["AGENT_NOT_STARTED", "AgentNotStarted", "CHECKER_KEY", "CheckerBroke", "EVENTS_KEY", "Event", "Failure",
           "KernelStuck", "error_output", "events", "failure_of", "failures_recorded", "no_verdict",
           "note_failure", "record"]

EVENTS_KEY = "autograde"  # the key of the execute step's record in a cell's metadata
CHECKER_KEY = "autograde_checker"  # a test cell's metadata: what its run in the checker cost ({"exchanges": n})

class Event(StrEnum):
    """What the execute step can record about a cell (the keys of ``cell.metadata["autograde"]``)."""

    KILLED = "killed"  # the kernel died while the cell ran; the notebook ran again without it. {"last_words": str}
    TIMED_OUT = "timed_out"  # interrupted at the time limit {}; or not run, past the notebook's {"notebook_timeout": s}
    CUT_SHORT = "cut_short"  # its output was cut. {"kept_chars": int}


class KernelStuck(Exception):
    """Interrupted at a time limit, the kernel did not go idle within ``iopub_timeout`` (one C call that ignores
    SIGINT, a busy thread holding the GIL): it is stopped like a dead kernel, and its cell counts as timed out."""


def record(cell, event: Event, **details) -> None:
    """Record `event` (with `details`) in `cell`'s metadata."""
    cell.setdefault("metadata", {}).setdefault(EVENTS_KEY, {})[str(event)] = details


def events(cell) -> dict[Event, dict]:
    """The events recorded in `cell`'s metadata (unknown or malformed entries are ignored)."""
    found = cell.get("metadata", {}).get(EVENTS_KEY, {})
    if not isinstance(found, dict):
        return {}
    return {Event(k): (v if isinstance(v, dict) else {}) for k, v in found.items() if k in Event._value2member_map_}


# What the execute step raises when the grader's agent or checker could not start for a kernel (the grader's failure:
# both start before any cell runs in that kernel).
AGENT_NOT_STARTED = "the grader's agent failed to start"


class AgentNotStarted(RuntimeError):
    """The grader's agent or checker did not start for a kernel: the grader's failure, not the student's."""


class CheckerBroke(RuntimeError):
    """The grader's checker failed while a notebook ran (it stopped, or did not answer): the grader's failure."""


class Failure(StrEnum):
    """Why the execute step failed a whole notebook (so that nbgrader could not grade it), as the worker learns it
    from :func:`failures_recorded`, never from the log's text (which the student's code can write)."""

    AGENT_NOT_STARTED = "agent_not_started"  # AgentNotStarted
    CHECKER = "checker"  # CheckerBroke: the grader's own process failed
    TIMEOUT = "timeout"  # a time limit no rerun could keep to (CellTimeoutError, a kernel stuck twice)
    DEAD_KERNEL = "dead_kernel"  # the kernel died outside any cell, or in the same cell twice


_recorders: list[list[Failure]] = []


@contextlib.contextmanager
def failures_recorded():
    """The list of :class:`Failure` that :class:`GuardedExecute` meets in this process while the block runs
    (``nbgrader autograde`` runs it in the caller's process)."""
    found: list[Failure] = []
    _recorders.append(found)
    try:
        yield found
    finally:
        _recorders.remove(found)


def failure_of(error: BaseException) -> Failure | None:
    """The :class:`Failure` an exception that ends the execute step stands for (None: another error)."""
    if isinstance(error, AgentNotStarted):
        return Failure.AGENT_NOT_STARTED
    if isinstance(error, CheckerBroke):
        return Failure.CHECKER
    if isinstance(error, (CellTimeoutError, KernelStuck)):
        return Failure.TIMEOUT
    if isinstance(error, DeadKernelError):
        return Failure.DEAD_KERNEL
    return None


def note_failure(error: BaseException) -> None:
    """Add the :class:`Failure` `error` stands for (if any) to every list :func:`failures_recorded` is filling."""
    failure = failure_of(error)
    for found in _recorders if failure is not None else ():
        found.append(failure)


def error_output(name: str, message: str) -> NotebookNode:
    """A notebook error output, as a failed cell shows it."""
    return NotebookNode(output_type="error", ename=name, evalue=message, traceback=[f"{name}: {message}"])


def no_verdict(cell) -> None:
    """Turn the ``execute_result`` outputs of an executed test cell into ``display_data`` showing the same.

    nbgrader scores a test cell by its first output that is an error or an
    ``execute_result``: a result that is not a number gives full points, a
    number partial credit, before any error is looked at. Student code can
    emit such a result (``sys.displayhook``) from inside a test; after this,
    only an error (the test's verdict) decides the cell's points.
    """
    for output in cell.get("outputs", []):
        if output.get("output_type") == "execute_result":
            output["output_type"] = "display_data"
            output.pop("execution_count", None)
            output.setdefault("metadata", {})
