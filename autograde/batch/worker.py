"""Grade one submission in a worker process: read it, normalise it, let nbgrader autograde it, classify the cells.

Each worker process has its own nbgrader course (nbgrader's SQLite gradebook
is not safe for concurrent writers, so workers never share one) and generates
each assignment there when it first needs it. Each submission is graded on its
own, so the results do not depend on how the work is split. A worker never
imports matplotlib or the output writers: it returns a :class:`Graded`.
"""
from __future__ import annotations

import json
import logging
import multiprocessing
import os
import signal
import socket
import sqlite3
import tempfile
import threading
import time
import traceback
import warnings
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from traitlets.config import Config

from ..course import EXERCISES, answer_names, configured, hold_settings, make_course, nbgrader_config
from ..intake.normalise import Unreadable, read_submission, rebuild
from ..results.classify import (
    Graded,
    Status,
    autograde_failure,
    cell_results,
    execution_notes,
    graded_cells,
    graders_fault,
    same_for_all,
)
from ..run.cgroups import cpu_cgroup_parent, memory_cgroup_parent
from ..run.execute import grading_settings
from ..run.kernel_manager import SandboxKernelManager, remove_scratch_of
from ..run.records import failures_recorded
from ..run.sandbox import check_sandbox
from ..text import first_line

log = logging.getLogger(__name__)

GRADING = "grading.json"  # in a worker's folder while it grades a submission: names it, should the worker be lost
FAILED = "failed"  # in a worker's folder: failed/<student>/<assignment>/autograde.log, nbgrader's log of a failure

_worker: dict = {}  # this process's course: root, api, assignments generated, timeout, kernel options


class SandboxUnavailable(RuntimeError):
    """No sandbox can be made on this machine, and the instructor did not opt out of it."""


def start(base: Path, threads: int, timeout: int | None, kernel: dict | None = None,
          overrides: dict | None = None, settings: Config | None = None) -> None:
    """Give this process its own nbgrader course folder under `base` (once per worker).

    Kernels started from here use at most `threads` threads for NumPy and
    PyTorch, so that parallel workers share the cores instead of fighting over
    them (unless the instructor typed ``--SandboxKernelManager.threads``); `timeout` and `kernel` (options of
    :class:`autograde.run.kernel_manager.SandboxKernelManager`) and `overrides`
    (any class's settings, by class name) are what the instructor typed over
    nbgrader_config.py's settings. `settings`, the file as the run read it at its start, is what this process
    reads of it from now on (a worker process of the run; the run's own process already holds it).
    """
    from sqlalchemy.exc import SAWarning

    if settings is not None:
        hold_settings(settings)

    warnings.simplefilter("ignore", SAWarning)  # nbgrader's gradebook code trips SQLAlchemy autoflush warnings
    _gradebooks_unsynced()
    kernel = {"threads": threads, **(kernel or {})}  # (a thread count the instructor typed wins)
    _worker.update(root=Path(base) / f"worker-{os.getpid()}", api=None, assignments=set(), timeout=timeout, kernel=kernel,
                   overrides=overrides)


def _unsynced(connection, _record) -> None:
    if isinstance(connection, sqlite3.Connection):
        connection.execute("PRAGMA synchronous=OFF")


def _gradebooks_unsynced() -> None:
    """Open every SQLite database of this process without waiting for the disk at each commit.

    The only ones a grading process opens are its workers' gradebooks, which
    nbgrader commits to after every graded cell: a quarter of a second per
    notebook spent in ``fsync``. A worker's gradebook is scratch (the scores are
    read back at once and the results kept apart), and a lost worker's
    replacement starts a course of its own, so a commit lost with the machine
    costs nothing. (SQLite's rollback journal stays: a process that dies mid-commit
    leaves no broken database.)
    """
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    if not event.contains(Engine, "connect", _unsynced):
        event.listen(Engine, "connect", _unsynced)


def scratch_base(timeout: int | None = None, kernel: dict | None = None, overrides: dict | None = None) -> str:
    """The folder kernels' scratch folders go in under these settings (``SandboxKernelManager.scratch_base``, else
    the system's temp folder)."""
    chosen = configured(nbgrader_config(Path("."), timeout, kernel, overrides), SandboxKernelManager, "scratch_base")
    return os.path.abspath(chosen) if chosen else tempfile.gettempdir()


def start_pool_worker(*args) -> None:
    """:func:`start` for a process pool's worker, which clears its record when the pool ends it.

    When one worker is lost, the pool terminates the others (SIGTERM): they
    were not lost themselves, so only the lost worker's record remains.
    """
    start(*args)
    # Found now, not in the handler: the handler runs in whatever the main thread was doing, and a lock that code
    # holds (tempfile's, while it first looks for the temporary folder) would hang the worker and the whole pool.
    record = _worker["root"] / GRADING
    scratch = scratch_base(_worker["timeout"], _worker["kernel"], _worker["overrides"])
    cgroup_parent, cpu_parent = memory_cgroup_parent(), cpu_cgroup_parent()

    def ended(signum, frame):
        record.unlink(missing_ok=True)
        # Its kernels die with it (bubblewrap's --die-with-parent); not their folders.
        remove_scratch_of(os.getpid(), scratch, cgroup_parent, cpu_parent)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, ended)

    # A worker whose grading command was killed (kill -9, a closed terminal) would grade on unseen: it ends itself.
    # (The pool's process, not getppid(): the command may have died while this worker was still starting.)
    parent = multiprocessing.parent_process().pid if multiprocessing.parent_process() else os.getppid()

    def orphaned():
        while os.getppid() == parent:
            time.sleep(1)
        ended(signal.SIGTERM, None)

    threading.Thread(target=orphaned, name="watch-parent", daemon=True).start()


def running_in(base: Path, scratch: str | None = None) -> set[tuple[str, str]]:
    """The submissions the workers under `base` were grading (their records are removed, as are the kernel
    folders of those workers, which were lost, in `scratch`, by default the system's temp folder)."""
    found = set()
    for record in Path(base).glob(f"worker-*/{GRADING}"):
        try:
            found.add(tuple(json.loads(record.read_text())))
        except (OSError, ValueError):
            pass
        record.unlink(missing_ok=True)
        remove_scratch_of(int(record.parent.name.split("-")[-1]), scratch, None, cpu_cgroup_parent())
    return found


def grader_failure(student: str, assignment: str, error: BaseException) -> Graded:
    """Error rows for a submission the grader itself failed on (a bug or a lost worker), not kept for later runs."""
    message = (f"the grader failed on this notebook ({type(error).__name__}: {first_line(error)}); "
               "grade it again, or by hand")
    return Graded(same_for_all(student, assignment, Status.ERROR, message), keep=False)


def grade_submission(student: str, assignment: str, notebook: Path) -> Graded:
    """Autograde one submitted notebook in this worker's course and return its rows and notes.

    The notebook is first rebuilt on the released one (:mod:`autograde.intake.normalise`),
    so copied, deleted, moved or unlabelled cells cost nothing. Whatever goes
    wrong, the submission gets rows: the batch goes on.
    """
    record = _worker["root"] / GRADING
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps([student, assignment]))
    try:
        return _grade_submission(student, assignment, notebook)
    except Exception as e:  # a notebook no one foresaw must not stop the class's grading
        traceback.print_exc()
        return grader_failure(student, assignment, e)
    finally:
        record.unlink(missing_ok=True)


def _grade_submission(student: str, assignment: str, notebook: Path) -> Graded:
    root = _worker["root"]
    try:
        submitted, notes = read_submission(notebook)
    except Unreadable as problem:  # (a file that is no notebook needs no course: it is graded before one is made)
        return Graded(same_for_all(student, assignment, Status.ERROR, str(problem)))
    if assignment not in _worker["assignments"]:  # generate each assignment once per worker, when first needed
        _worker["api"] = make_course(root, [assignment], _worker["timeout"], _worker["kernel"], _worker.get("overrides"))
        _worker["assignments"].add(assignment)
    api = _worker["api"]
    target = root / "submitted" / student / assignment / f"{assignment}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    released = nbformat.read(EXERCISES / assignment / f"{assignment}.ipynb", as_version=4)
    rebuilt, repairs = rebuild(submitted, released, answer_names(assignment))
    notes = notes + repairs
    nbformat.write(rebuilt, target)
    with failures_recorded() as failures:  # (nbgrader runs the execute step in this process)
        result = api.autograde(assignment, student, force=True, create=True)
    if not result["success"]:
        # nbgrader removes a failed notebook's autograded folder: its log is kept so the cause can be read.
        failed = root / FAILED / student / assignment / "autograde.log"
        failed.parent.mkdir(parents=True, exist_ok=True)
        failed.write_text((result.get("error") or "") + "\n" + (result.get("log") or ""), encoding="utf-8")
        log = (result.get("error") or "") + "\n" + (result.get("log") or "")
        failure = failures[-1] if failures else None
        status, message = autograde_failure(failure, log)
        return Graded(same_for_all(student, assignment, status, message), notes, keep=not graders_fault(failure))
    executed = nbformat.read(root / "autograded" / student / assignment / f"{assignment}.ipynb", as_version=4)
    scores = {}
    with Gradebook(api.coursedir.db_url) as gradebook:
        for grade_id, _ in graded_cells(assignment):
            try:
                scores[grade_id] = float(gradebook.find_grade(grade_id, assignment, assignment, student).score)
            except MissingEntry:
                pass
    return Graded(cell_results(student, assignment, executed, scores), notes + execution_notes(executed))


_remote_lock = threading.Lock()


def grade_remote(student: str, assignment: str, notebook: bytes, threads: int, timeout: int | None,
                 kernel: dict | None = None, overrides: dict | None = None, settings: Config | None = None) -> Graded:
    """Grade one notebook given as bytes on a Dask worker, in a course private to the worker process.

    The worker may be on another machine, so the notebook travels as bytes and
    the course lives in the worker's temporary folder. Tasks that a
    multi-threaded worker runs at once take turns (nbgrader is not thread-safe).
    """
    with _remote_lock:
        # A worker outlives a run: a later run with other limits (or --no-sandbox) gets a course made with its own.
        options = (threads, timeout, kernel, overrides, settings)
        if _worker.get("remote_options") != options:
            if settings is not None:  # (before anything reads the settings: the run's, not this machine's file)
                hold_settings(settings)
            problem = check_sandbox() if grading_settings(timeout, kernel)["sandbox"] else None
            if problem is not None:  # on this worker's machine: stop the run rather than grade unsandboxed
                raise SandboxUnavailable(f"on Dask worker {socket.gethostname()}: {problem}")
            scratch = scratch_base(timeout, kernel, overrides)  # (the instructor's folder, if this machine has it)
            start(Path(tempfile.mkdtemp(prefix="autograde-worker-", dir=scratch if os.path.isdir(scratch) else None)),
                  threads, timeout, kernel, overrides, settings)
            _worker["remote_options"] = options
        incoming = _worker["root"] / "incoming" / student / f"{assignment}.ipynb"
        incoming.parent.mkdir(parents=True, exist_ok=True)
        incoming.write_bytes(notebook)
        return grade_submission(student, assignment, incoming)
