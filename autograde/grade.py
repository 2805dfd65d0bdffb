"""Grade a folder of submissions with nbgrader and write scores.csv and grades.csv.

The submissions folder has nbgrader's submitted layout,
``SUBMISSIONS/<student_id>/<assignment_id>/<assignment_id>.ipynb``. Grading
happens in a scratch nbgrader course under ``OUTDIR/nbgrader``: the sources are
compiled there, the submissions copied in, and ``nbgrader autograde`` restores
the test cells and hidden tests from the gradebook, verifies checksums and
executes each notebook. The submissions and the repository are only read.
"""
from __future__ import annotations

import csv
import functools
import hashlib
import importlib.metadata
import json
import multiprocessing
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from sqlalchemy.exc import SAWarning
from tqdm import tqdm

from .collect import Collect, collect, write_unmatched
from .course import EXERCISES, SOLUTIONS, assignment_ids, grading_settings, load_config, make_course, source_notebook
from .execute import defined_names, remove_scratch_of
from .normalise import rebuild, salvage
from .pool import run_surviving_losses
from .reference import solution_code
from .report import write_feedback, write_report
from .sandbox import check_sandbox

SCORE_COLUMNS = ["student_id", "lms_user_id", "assignment", "grade_id", "score", "max_score", "status", "message"]
GRADE_COLUMNS = ["student_id", "lms_user_id", "assignment", "score", "max_score"]


class SandboxUnavailable(RuntimeError):
    """No sandbox can be made on this machine, and the instructor did not opt out of it."""


@dataclass
class CellResult:
    """One row of scores.csv: how one test cell of one submission fared."""

    student_id: str
    assignment: str
    grade_id: str
    score: float
    max_score: float
    status: str  # passed, failed, error, timeout, crashed, tampering or missing
    message: str


def first_line(text: str) -> str:
    """The first non-empty line of `text`, stripped, at most 300 characters."""
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def cell_failure(cell) -> tuple[str, str] | None:
    """(status, message) for an executed test cell that failed, or None if it shows no failure."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            name, value = output.get("ename", "Error"), first_line(output.get("evalue", ""))
            if name in ("CellTimeoutError", "KeyboardInterrupt"):
                # nbgrader interrupts a cell that runs past the limit; the cell then shows KeyboardInterrupt.
                return "timeout", "the cell ran longer than the time limit and was interrupted"
            if name == "TamperingError":
                return "tampering", value
            if name == "KernelDied":
                return "crashed", value
            if name == "NotImplementedError":
                return "error", "NotImplementedError: not done yet (replace raise NotImplementedError() with your code)"
            status = "failed" if name == "AssertionError" else "error"
            return status, f"{name}: {value}" if value else name
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream" and output.get("name") == "stderr":
            return "failed", f"wrote to stderr (counts as a failure): {first_line(output.get('text', ''))}"
    return None


def timed_out(notebook) -> bool:
    """Whether any cell of an executed notebook hit the per-cell time limit."""
    return any(
        o.get("ename") == "CellTimeoutError" for c in notebook.cells for o in c.get("outputs", []) if o.get("output_type") == "error"
    )


def test_cells(assignment: str) -> list[tuple[str, float]]:
    """(grade_id, points) of every autograded test cell of `assignment`, in notebook order."""
    return [(c.metadata["nbgrader"]["grade_id"], float(c.metadata["nbgrader"].get("points", 0)))
            for c in source_notebook(assignment).cells
            if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")]


def results_for(root: Path, gradebook: Gradebook | None, student: str, assignment: str, outcome: str | None) -> list[CellResult]:
    """The rows of one submission, from the gradebook and the executed notebook.

    `outcome` is None when nbgrader autograded the submission, else the reason
    it could not (then every cell gets that status and no points, and
    `gradebook` is not read).
    """
    cells = test_cells(assignment)
    if outcome is not None:
        status, message = outcome.split(": ", 1)
        return [CellResult(student, assignment, g, 0.0, m, status, message) for g, m in cells]
    executed = nbformat.read(root / "autograded" / student / assignment / f"{assignment}.ipynb", as_version=4)
    by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in executed.cells}
    notebook_timed_out = timed_out(executed)
    rows = []
    for grade_id, max_score in cells:
        try:
            grade = gradebook.find_grade(grade_id, assignment, assignment, student)
            score = float(grade.score)
        except MissingEntry:
            rows.append(CellResult(student, assignment, grade_id, 0.0, max_score, "missing", "the test cell is not in the graded notebook"))
            continue
        failure = cell_failure(by_id[grade_id]) if grade_id in by_id else None
        if score >= max_score:
            status, message = "passed", ""
        elif failure is not None:
            status, message = failure
            if notebook_timed_out and status == "error":
                status, message = "timeout", f"an earlier cell ran longer than the time limit; then {message}"
        else:
            status, message = "failed", "scored less than full marks"
        rows.append(CellResult(student, assignment, grade_id, score, max_score, status, message))
    return rows


def read_submission(notebook: Path) -> tuple[nbformat.NotebookNode | None, str | None, list[str]]:
    """The submitted notebook, or None and why it cannot be graded ('error: ...'); and notes on any salvage.

    A file that is JSON with cells but breaks the notebook format (hand-edited,
    written by an odd tool) is salvaged: its cells are kept, the rest dropped
    (:func:`autograde.normalise.salvage`).
    """
    data = notebook.read_bytes()
    if not data.strip():
        return None, "error: the submitted file is empty", []
    try:
        content = json.loads(data)
    except ValueError as e:
        return None, f"error: the submitted file is not a notebook (not valid JSON: {first_line(e)})", []
    try:
        nb = nbformat.reads(data.decode("utf-8", errors="replace"), as_version=4)
        nbformat.validate(nb)
        return nb, None, []
    except Exception as e:  # nbformat raises several kinds of errors for malformed notebooks
        problem = first_line(e)
    nb = salvage(content)
    if nb is None:
        return None, f"error: the submitted file is not a valid notebook ({problem})", []
    return nb, None, [f"the file did not follow the notebook format ({problem}); its cells were read and "
                      "their outputs and other metadata dropped"]


def autograde_one(api, student: str, assignment: str) -> str | None:
    """Run nbgrader autograde on one submission; None on success, else 'status: message'."""
    result = api.autograde(assignment, student, force=True, create=True)
    if result["success"]:
        return None
    log = (result.get("error") or "") + "\n" + (result.get("log") or "")
    if "CellTimeoutError" in log or "Timeout" in log:
        return "timeout: the notebook did not finish within the time limit"
    if "Kernel died" in log or "DeadKernelError" in log:
        return "crashed: the notebook's kernel died (a crash, os._exit or running out of memory)"
    # The most informative line is the last 'SomeError: message' of nbgrader's traceback.
    raised = [line.strip() for line in log.splitlines() if re.match(r"\s*[\w.]*(Error|Exception)\b.*:", line)]
    detail = raised[-1] if raised else first_line(log)
    return f"error: nbgrader could not grade this notebook: {detail[:300]}"


# One nbgrader course per worker process: nbgrader's SQLite gradebook is not
# safe for concurrent writers, so workers never share one. Each submission is
# graded on its own, so the results do not depend on how work is split.
_worker: dict = {}


def _start_worker(base: Path, threads: int, timeout: int | None, kernel: dict | None = None) -> None:
    """Give this process its own nbgrader course folder under `base` (runs once per worker).

    Kernels started from here use at most `threads` threads for NumPy and
    PyTorch, so that parallel workers share the cores instead of fighting over
    them; `timeout` and `kernel` (options of
    :class:`autograde.execute.SandboxKernelManager`) are what the instructor
    typed over nbgrader_config.py's settings.
    """
    warnings.simplefilter("ignore", SAWarning)  # nbgrader's gradebook code trips SQLAlchemy autoflush warnings
    kernel = {**(kernel or {}), "threads": threads}
    _worker.update(root=Path(base) / f"worker-{os.getpid()}", api=None, assignments=set(), timeout=timeout, kernel=kernel)


GRADING = "grading.json"  # in a worker's folder while it grades a submission: names it, should the worker be lost


def _start_pool_worker(*args) -> None:
    """:func:`_start_worker` for a process pool's worker, which clears its record when the pool ends it.

    When one worker is lost, the pool terminates the others (SIGTERM): they
    were not lost themselves, so only the lost worker's record remains.
    """
    _start_worker(*args)

    def ended(signum, frame):
        (_worker["root"] / GRADING).unlink(missing_ok=True)
        remove_scratch_of(os.getpid())  # its kernels die with it (bubblewrap's --die-with-parent); not their folders
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, ended)


def running_in(base: Path) -> set[tuple[str, str]]:
    """The submissions the workers under `base` were grading (their records are removed, as are the kernel
    folders of those workers, which were lost)."""
    found = set()
    for record in Path(base).glob(f"worker-*/{GRADING}"):
        try:
            found.add(tuple(json.loads(record.read_text())))
        except (OSError, ValueError):
            pass
        record.unlink(missing_ok=True)
        remove_scratch_of(int(record.parent.name.split("-")[-1]))
    return found


@dataclass
class Graded:
    """What grading one submission gives: its rows of scores.csv and notes on what was repaired or flagged."""

    rows: list[CellResult]
    notes: list[str] = field(default_factory=list)
    keep: bool = True  # False when the grader itself failed: the next run tries again


def grader_failure(student: str, assignment: str, error: BaseException) -> Graded:
    """Error rows for a submission the grader itself failed on (a bug or a lost worker), not kept for later runs."""
    message = (f"error: the grader failed on this notebook ({type(error).__name__}: {first_line(error)}); "
               "grade it again, or by hand")
    return Graded(results_for(Path(), None, student, assignment, message), keep=False)


@functools.cache
def _answer_names(assignment: str) -> dict[str, frozenset]:
    """Names each answer's reference solution defines, less those that given cells define."""
    cells = source_notebook(assignment).cells
    given = {n for c in cells if c.cell_type == "code" and not c.metadata.get("nbgrader", {}).get("solution")
             for n in defined_names(c.source)}
    return {c.metadata["nbgrader"]["grade_id"]: frozenset(set(defined_names(solution_code(c.source))) - given)
            for c in cells if c.metadata.get("nbgrader", {}).get("solution")}


def _cell_name(notebook: nbformat.NotebookNode, index: int) -> str:
    return notebook.cells[index].metadata.get("nbgrader", {}).get("grade_id") or f"number {index + 1}"


def execution_notes(executed: nbformat.NotebookNode) -> list[str]:
    """Notes on what GuardedExecute saw in an executed notebook: restorations, dead kernels and their last words,
    cells stopped at the time limit, cut outputs."""
    notes = []
    meta = executed.metadata.get("autograde", {})
    if meta.get("restored"):
        notes.append("before the tests ran, the grader undid changes the notebook made to what tests rely on: "
                     + "; ".join(meta["restored"][:10]))
    for index in meta.get("kernel_died_in", []):
        last = meta.get("last_words", {}).get(str(index))
        notes.append(f"the kernel died in cell {_cell_name(executed, index)}; that cell was skipped and the notebook "
                     "graded without it" + (f". The kernel's last words: {last}" if last else ""))
    for index in meta.get("timed_out", []):
        cell = executed.cells[index].metadata.get("nbgrader", {})
        if not (cell.get("grade") and not cell.get("solution")):  # (a test cell's timeout is its status)
            notes.append(f"cell {_cell_name(executed, index)} was stopped at the time limit before it finished; "
                         "what it had defined by then was kept, and the tests ran on that")
    cut = [i for i, c in enumerate(executed.cells) if any("by the grader]" in o.get("text", "") for o in c.get("outputs", []))]
    if cut:
        notes.append(f"the output of {len(cut)} cell(s) was cut short (too long)")
    return notes


def grade_submission(student: str, assignment: str, notebook: Path) -> Graded:
    """Autograde one submitted notebook in this worker's course and return its rows and notes.

    The notebook is first rebuilt on the released one (:mod:`autograde.normalise`),
    so copied, deleted, moved or unlabelled cells cost nothing. Whatever goes
    wrong, the submission gets rows: the batch goes on.
    """
    record = _worker["root"] / GRADING
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps([student, assignment]))
    try:
        return _grade_submission(student, assignment, notebook)
    except Exception as e:  # a notebook no one foresaw must not stop the class's grading
        import traceback

        traceback.print_exc()
        return grader_failure(student, assignment, e)
    finally:
        record.unlink(missing_ok=True)


def _grade_submission(student: str, assignment: str, notebook: Path) -> Graded:
    root = _worker["root"]
    submitted, outcome, salvaged = read_submission(notebook)
    if outcome is not None:  # (a file that is no notebook needs no course: it is graded before one is made)
        return Graded(results_for(root, None, student, assignment, outcome))
    if assignment not in _worker["assignments"]:  # generate each assignment once per worker, when first needed
        _worker["api"] = make_course(root, [assignment], _worker["timeout"], _worker["kernel"])
        _worker["assignments"].add(assignment)
    api = _worker["api"]
    target = root / "submitted" / student / assignment / f"{assignment}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    released = nbformat.read(EXERCISES / assignment / f"{assignment}.ipynb", as_version=4)
    rebuilt, notes = rebuild(submitted, released, _answer_names(assignment))
    notes = salvaged + notes
    nbformat.write(rebuilt, target)
    outcome = autograde_one(api, student, assignment)
    if outcome is not None:
        return Graded(results_for(root, None, student, assignment, outcome), notes)
    executed = nbformat.read(root / "autograded" / student / assignment / f"{assignment}.ipynb", as_version=4)
    with Gradebook(api.coursedir.db_url) as gradebook:
        return Graded(results_for(root, gradebook, student, assignment, None), notes + execution_notes(executed))


_remote_lock = threading.Lock()


def grade_remote(student: str, assignment: str, notebook: bytes, threads: int, timeout: int | None,
                 kernel: dict | None = None) -> Graded:
    """Grade one notebook given as bytes on a Dask worker, in a course private to the worker process.

    The worker may be on another machine, so the notebook travels as bytes and
    the course lives in the worker's temporary folder. Tasks that a
    multi-threaded worker runs at once take turns (nbgrader is not thread-safe).
    """
    with _remote_lock:
        # A worker outlives a run: a later run with other limits (or --no-sandbox) gets a course made with its own.
        options = (threads, timeout, kernel)
        if _worker.get("remote_options") != options:
            problem = check_sandbox() if grading_settings(timeout, kernel)["sandbox"] else None
            if problem is not None:  # on this worker's machine: stop the run rather than grade unsandboxed
                raise SandboxUnavailable(f"on Dask worker {socket.gethostname()}: {problem}")
            _start_worker(Path(tempfile.mkdtemp(prefix="autograde-worker-")), threads, timeout, kernel)
            _worker["remote_options"] = options
        incoming = _worker["root"] / "incoming" / student / f"{assignment}.ipynb"
        incoming.parent.mkdir(parents=True, exist_ok=True)
        incoming.write_bytes(notebook)
        return grade_submission(student, assignment, incoming)


def grade(submissions: Path, out: Path, assignments: list[str] | None = None, progress: bool = True,
          jobs: int | None = None, roster: Path | None = None, student_pattern: str | None = None,
          timeout: int | None = None, scheduler: str | None = None, memory_mib: int | None = None,
          sandbox: bool | None = None, processes: int | None = None, disk_mib: int | None = None,
          lms: str | None = None) -> list[CellResult]:
    """Autograde every submission in `submissions`; write scores.csv, grades.csv and unmatched.csv into `out`.

    `submissions` is a folder or zip in nbgrader's submitted layout or as an
    LMS exports it (see :mod:`autograde.collect`; `lms` forces a layout,
    `student_pattern` reads student ids from flat file names). Every student
    gets rows for each of `assignments` (default: every assignment that anyone
    submitted), with status ``missing`` where they have no notebook. Grades
    `jobs` submissions at a time (default: one per CPU core), each worker
    process in its own nbgrader course under ``out/nbgrader``. With
    `scheduler`, the address of a Dask distributed scheduler, the notebooks are
    graded on that cluster's workers instead. The limits are nbgrader_config.py's,
    and each of `timeout` (seconds per cell), `memory_mib` (address space),
    `processes`, `disk_mib` and `sandbox` replaces its setting where given
    (:class:`autograde.execute.SandboxKernelManager`). Kernels run in a
    bubblewrap sandbox (:mod:`autograde.sandbox`) unless the sandbox is off;
    when no sandbox can be made, :class:`SandboxUnavailable` is raised before
    anything is graded. Writes notes.csv (what was repaired or flagged per
    submission), per-student feedback and report.html, each with the LMS's user
    id beside the student id. Returns the rows of scores.csv. A submission
    that cannot be graded gets rows with status ``missing``, ``error`` or
    ``timeout`` and no points; it never stops the others.
    """
    started = time.perf_counter()
    submissions, out = Path(submissions), Path(out)
    # Only what the instructor typed goes over nbgrader_config.py's settings.
    kernel = {name: value for name, value in [("memory_mib", memory_mib), ("max_processes", processes),
                                              ("disk_mib", disk_mib), ("sandbox", sandbox)] if value is not None}
    settings = grading_settings(timeout, kernel)
    if settings["sandbox"] and scheduler is None:  # (Dask workers check on their own machines)
        problem = check_sandbox()
        if problem is not None:
            raise SandboxUnavailable(problem)
    known = assignment_ids()
    unknown = sorted(set(assignments or []) - set(known))
    if unknown:
        raise ValueError(f"unknown assignment(s) {', '.join(unknown)}; known: {', '.join(known)}")
    for folder in (out / "nbgrader", out / "submitted", out / "feedback"):
        if folder.exists():
            shutil.rmtree(folder)  # a fresh course each run: grades never mix with an earlier run's
    out.mkdir(parents=True, exist_ok=True)
    collected = collect(submissions, out / "submitted", assignments or known, student_pattern, roster, lms,
                        Collect(config=load_config()))
    write_unmatched(collected.unmatched, out / "unmatched.csv")
    chosen = assignments or sorted({a for _, a in collected.submissions}) or known
    found = {(s, a): collected.submissions.get((s, a)) for s in collected.students for a in chosen}
    base = out / "nbgrader"

    results: dict[tuple[str, str], Graded] = {}
    for (student, assignment), notebook in found.items():
        if notebook is None:
            message = f"missing: no notebook for {assignment} in the submission"
            results[(student, assignment)] = Graded(results_for(base, None, student, assignment, message))
    # Results of earlier runs are reused when nothing a grade depends on changed (result_key): re-running is
    # idempotent and a late submission is graded alone.
    keys = {(s, a): result_key(found[(s, a)], a, settings) for (s, a) in found if (s, a) not in results}
    for student, assignment in keys:
        cached = load_result(out, student, assignment, keys[(student, assignment)])
        if cached is not None:
            results[(student, assignment)] = cached
    reused = len(keys) - sum(1 for k in keys if k not in results)
    todo = [(s, a, found[(s, a)]) for (s, a) in found if (s, a) not in results]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1))
    bar = tqdm(total=len(todo), desc="grading", unit="notebook", disable=not progress)

    def finish(key: tuple[str, str], outcome) -> None:
        """Record (and keep for later runs) one submission's result: a Graded, or a future that gives one."""
        if not isinstance(outcome, Graded):
            try:
                outcome = outcome.result()
            except SandboxUnavailable:
                raise
            except Exception as e:  # the worker machine was lost (Dask), or the grader failed outside a notebook
                outcome = grader_failure(*key, e)
        results[key] = outcome
        if outcome.keep:
            save_result(out, *key, keys[key], outcome)
        bar.update()

    def lost(key: tuple[str, str]) -> None:
        finish(key, grader_failure(*key, RuntimeError("the worker process grading it was lost twice (killed, or "
                                                      "out of memory)")))
    if scheduler is not None:
        from distributed import Client
        from distributed import as_completed as dask_completed

        with Client(scheduler, timeout="30s") as client:
            futures = {client.submit(grade_remote, s, a, nb.read_bytes(), 1, timeout, kernel, pure=False): (s, a)
                       for s, a, nb in todo}
            for future in dask_completed(list(futures)):
                finish(futures[future], future)
    elif jobs == 1:
        _start_worker(base, os.cpu_count() or 1, timeout, kernel)
        for student, assignment, notebook in todo:
            finish((student, assignment), grade_submission(student, assignment, notebook))
    else:
        run_surviving_losses(grade_submission, {(s, a): (s, a, nb) for s, a, nb in todo}, jobs,
                             multiprocessing.get_context("spawn"),  # no zmq or sqlite state inherited from here
                             _start_pool_worker, (base, max(1, (os.cpu_count() or 1) // jobs), timeout, kernel),
                             lambda: running_in(base), finish, lost)
    bar.close()
    rows = [row for key in found for row in results[key].rows]
    notes = {key: collected.notes.get(key, []) + results[key].notes for key in found
             if collected.notes.get(key) or results[key].notes}
    write_csvs(rows, out, collected.lms_ids)
    write_notes(notes, out / "notes.csv", collected.lms_ids)
    write_feedback(rows, out / "feedback", notes, collected.lms_ids)
    write_report(rows, out / "report.html", time.perf_counter() - started, len(todo), notes)
    grade.last_run = {"graded": len(todo), "reused": reused}  # for the command line's summary
    return rows


@functools.cache
def grader_fingerprint() -> str:
    """A hash of the grader itself: this package's code and settings (nbgrader_config.py) and the versions it runs on."""
    h = hashlib.sha256(sys.version.encode())
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    for package in ("nbgrader", "nbclient", "nbconvert", "nbformat", "ipykernel", "jupyter_client", "numpy", "torch"):
        try:
            h.update(f"{package}=={importlib.metadata.version(package)}".encode())
        except importlib.metadata.PackageNotFoundError:
            h.update(f"{package} absent".encode())
    return h.hexdigest()


def result_key(notebook: Path, assignment: str, settings: dict) -> str:
    """A hash of everything a submission's grade depends on.

    The notebook, the exercise's source, the effective limits (`settings`, as
    :func:`autograde.course.grading_settings` gives them, so a default changed in
    nbgrader_config.py counts too) and the grader's code and configuration.
    """
    h = hashlib.sha256(notebook.read_bytes())
    h.update((SOLUTIONS / assignment / f"{assignment}.py").read_bytes())
    h.update(json.dumps(settings, sort_keys=True).encode())
    h.update(grader_fingerprint().encode())
    return h.hexdigest()


def _result_path(out: Path, student: str, assignment: str) -> Path:
    return out / "results" / student / f"{assignment}.json"


def load_result(out: Path, student: str, assignment: str, key: str) -> Graded | None:
    """What an earlier run saved for this submission, if it was graded with the same `key`."""
    path = _result_path(out, student, assignment)
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if saved.get("key") != key:
        return None
    return Graded([CellResult(**row) for row in saved["rows"]], saved.get("notes", []))


def save_result(out: Path, student: str, assignment: str, key: str, graded: Graded) -> None:
    """Keep the rows and notes of one graded submission for later runs."""
    path = _result_path(out, student, assignment)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": key, "rows": [asdict(r) for r in graded.rows], "notes": graded.notes}))


def write_notes(notes: dict[tuple[str, str], list[str]], path: Path, lms_ids: dict[str, str] | None = None) -> None:
    """Write notes.csv: one row per note (student_id, lms_user_id, assignment, note)."""
    lms_ids = lms_ids or {}
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student_id", "lms_user_id", "assignment", "note"])
        for (student, assignment), lines in notes.items():
            writer.writerows([student, lms_ids.get(student, ""), assignment, line] for line in lines)


def write_csvs(rows: list[CellResult], out: Path, lms_ids: dict[str, str] | None = None) -> None:
    """Write scores.csv (one row per test cell) and grades.csv (one row per submission) into `out`.

    `lms_ids` maps student ids to the LMS's own user ids (column lms_user_id, empty where unknown).
    """
    lms_ids = lms_ids or {}
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "scores.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=SCORE_COLUMNS)
        writer.writeheader()
        writer.writerows({**asdict(r), "lms_user_id": lms_ids.get(r.student_id, "")} for r in rows)
    totals: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        total = totals.setdefault((r.student_id, r.assignment), [0.0, 0.0])
        total[0] += r.score
        total[1] += r.max_score
    with open(out / "grades.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(GRADE_COLUMNS)
        for (student, assignment), (score, max_score) in totals.items():
            writer.writerow([student, lms_ids.get(student, ""), assignment, score, max_score])
