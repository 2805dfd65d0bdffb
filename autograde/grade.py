"""Grade a folder or zip of submissions: the pipeline's steps, in order, and the run's result.

collect (:mod:`autograde.intake.collect`) → reuse what the cache holds
(:mod:`autograde.results.cache`) → grade the rest on an executor (:mod:`autograde.batch.pool`;
each submission in :mod:`autograde.batch.worker`: normalise, execute, classify) →
write scores.csv, grades.csv, notes.csv (:mod:`autograde.results.outputs`), feedback
(:mod:`autograde.pages.feedback`) and report.html (:mod:`autograde.pages.report`). The
submissions and the repository are only read.

A run writes into a fresh folder inside the output folder and shows it at the
end by flipping one link, so a run that fails, or is killed while it swaps,
leaves the last run's output as it was. The grader
replaces only what it wrote itself: folders that carry its marker file and, in
an output folder that carries the marker, the files it names.
"""
from __future__ import annotations

import functools
import json
import logging
import multiprocessing
import os
import shutil
import time
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm
from traitlets import Float, HasTraits, Int, TraitError, Type
from traitlets.config import Configurable
from traitlets.utils.importstring import import_item

from . import output_folder
from .batch import boot, worker
from .batch.pool import run_all
from .batch.worker import SandboxUnavailable
from .course import REPO, assignment_ids, configured, load_config, nbgrader_config, read_once
from .intake.collect import Collect, Collected, Unmatched, collect, write_unmatched
from .output_folder import MARKER, OWN_FILES, OWN_FOLDERS  # noqa: F401 (importable from here, as before)
from .pages import pdf as pdf_pages
from .pages.feedback import write_feedback
from .pages.report import write_report
from .pages.similarity import Similarity, write_similarity
from .results import cache, late
from .results.classify import CellResult, Graded, Status, same_for_all
from .results.outputs import write_csvs, write_notes
from .run.execute import GuardedExecute, grading_settings
from .run.kernel_manager import SandboxKernelManager
from .run.sandbox import check_sandbox, check_user_sandbox

__all__ = ["MARKER", "OWN_FILES", "OWN_FOLDERS", "ChromiumUnavailable", "GradeResult", "SandboxUnavailable",
           "default_jobs", "grade", "settings_in_force"]

ChromiumUnavailable = pdf_pages.ChromiumUnavailable

log = logging.getLogger(__name__)

def settings_in_force(overrides: dict | None = None) -> dict:
    """Every setting grading runs under, nbgrader_config.py's with `overrides` over them: the limits by their short
    names (:func:`autograde.run.execute.grading_settings`) and every setting of the classes that run a notebook, as
    ``Class.name`` (so that one the command line sets, or one added later, is in the cache key)."""
    overrides = overrides or {}
    config = nbgrader_config(Path("."), overrides=overrides)
    settings = grading_settings(overrides.get("GuardedExecute", {}).get("timeout"),
                                overrides.get("SandboxKernelManager", {}), overrides)
    for cls in (GuardedExecute, SandboxKernelManager, *_classes_named(set(overrides) - {"GuardedExecute",
                                                                                     "SandboxKernelManager"})):
        for name, trait in sorted(cls.class_traits(config=True).items()):
            value = configured(config, cls, name)
            typed = any(k.__name__ in config and name in config[k.__name__] for k in cls.mro())
            try:  # (a number the file sets is range-checked as one typed on the command line is)
                if typed and isinstance(trait, (Int, Float)) and not (value is None and trait.allow_none):
                    trait.validate(HasTraits(), value)
            except TraitError as error:
                raise ValueError(f"{cls.__name__}.{name} = {value!r} (autograde/nbgrader_config.py or the command "
                                 f"line): {error}") from None
            if trait.metadata.get("grades", True):  # (not where scratch folders go: it changes no grade)
                settings[f"{cls.__name__}.{name}"] = _stable(trait, value)
    return json.loads(json.dumps(settings, default=repr))  # (as the cache key hashes it)


def _classes_named(names: set[str]) -> list[type]:
    """The package's configurable classes of these names (settings typed for another class: also in the key)."""
    found, todo = [], [Configurable]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__name__ in names and sub.__module__.startswith("autograde.") and sub not in found:
                found.append(sub)
    return sorted(found, key=lambda c: c.__name__)


def _stable(trait, value):
    """A setting's value as the same text in every run: a class setting given by its dotted name, or the class
    itself once it was imported, both as the class's own name."""
    if isinstance(trait, Type) and isinstance(value, str):
        try:
            value = import_item(value)
        except ImportError:
            return value
    return f"{value.__module__}.{value.__qualname__}" if isinstance(value, type) else value


def default_jobs() -> int:
    """Submissions graded at once by default: the cores this process may use (its CPU affinity, which a container
    or ``taskset`` limits), not all the machine has."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # (no affinity on this platform)
        return os.cpu_count() or 1



@dataclass
class GradeResult:
    """What one run of :func:`grade` did: the rows of scores.csv, and how many notebooks it graded or reused."""

    rows: list[CellResult]
    graded: int  # notebooks graded in this run
    reused: int  # notebooks whose result an earlier run into the same folder had kept
    notes: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # what was repaired or flagged
    unmatched: list[Unmatched] = field(default_factory=list)  # files not graded, and why
    layout: str = ""  # the export layout recognised
    lateness: dict = field(default_factory=dict)  # (student, assignment) -> its late penalty (results.late.Lateness)

    @property
    def submissions(self) -> int:
        """Students times assignments graded, handed in or not."""
        return len({(r.student_id, r.assignment) for r in self.rows})

    @property
    def problems(self) -> int:
        """Test cells the instructor should look at: errors, timeouts, crashes, missing notebooks."""
        return sum(r.status.is_problem for r in self.rows)


def _settings_read_once(function):
    """Run `function` with nbgrader_config.py read once, at its start, for this process and the workers it starts
    (:func:`autograde.course.read_once`): an edit of the file during a run changes nothing in it."""
    @functools.wraps(function)
    def reading_once(*args, **kwargs):
        with read_once():
            return function(*args, **kwargs)
    return reading_once


@_settings_read_once
def grade(submissions: Path, out: Path, assignments: list[str] | None = None, progress: bool = True,
          jobs: int | None = None, roster: Path | None = None, student_pattern: str | None = None,
          timeout: int | None = None, scheduler: str | None = None, memory_mib: int | None = None,
          sandbox: bool | None = None, processes: int | None = None, disk_mib: int | None = None,
          lms: str | None = None, overrides: dict | None = None, gradebook: Path | None = None, pdf: bool = False,
          chromium: str | None = None) -> GradeResult:
    """Autograde every submission in `submissions`; write scores.csv, grades.csv, notes.csv, unmatched.csv,
    feedback/ and report.html into `out`.

    `submissions` is a folder or zip in nbgrader's submitted layout or as an
    LMS exports it (see :mod:`autograde.intake.collect`; `lms` forces a layout,
    `student_pattern` reads student ids from flat file names). Every student
    gets rows for each of `assignments` (default: every assignment that anyone
    submitted), with status ``missing`` where they have no notebook. Grades
    `jobs` submissions at a time (default: one per core this process may
    use), each worker process in its own nbgrader course under
    ``out/nbgrader``. The run is written into a fresh folder in `out` and
    swapped in at the end; what `out` holds that the grader did not write
    (no :data:`MARKER`) is never replaced: ValueError before anything is done. With
    `scheduler`, the address of a Dask distributed scheduler, the notebooks are
    graded on that cluster's workers instead. The limits are nbgrader_config.py's,
    and each of `timeout` (seconds per cell), `memory_mib` (address space),
    `processes`, `disk_mib` and `sandbox` replaces its setting where given
    (:class:`autograde.run.kernel_manager.SandboxKernelManager`), as do
    `overrides`, settings by class name (``{"GuardedExecute": {"timeout": 30}}``,
    what the command line sets): they go over the file's whatever class it
    sets them for. The cache key holds every setting in force. Kernels run in a
    bubblewrap sandbox (:mod:`autograde.run.sandbox`) unless the sandbox is off;
    when no sandbox can be made, :class:`SandboxUnavailable` is raised before
    anything is graded. A submission that cannot be graded gets rows with a
    status saying why and no points; it never stops the others. The late
    policy (:class:`autograde.results.late.LatePolicy`, set in `overrides` or
    the file) is applied after grading, to the totals; `gradebook`, a Moodle
    grading worksheet, gives submission times the export lacks. With `pdf`,
    each feedback page and the report are also printed to PDF
    (:mod:`autograde.pages.pdf`) with Chromium (`chromium`, else the one on the
    PATH); :class:`ChromiumUnavailable` is raised before anything is graded if
    it cannot start.
    """
    started = time.perf_counter()
    # Absolute: the workers run nbgrader in folders of their own, where a relative path would name nothing.
    submissions, out = Path(submissions).absolute(), Path(out).absolute()
    # Only what the instructor typed goes over nbgrader_config.py's settings, for the very class that uses it.
    overrides = {section: dict(values) for section, values in (overrides or {}).items()}
    if timeout is not None:
        overrides.setdefault("GuardedExecute", {})["timeout"] = timeout
    typed = [("memory_mib", memory_mib), ("max_processes", processes), ("disk_mib", disk_mib), ("sandbox", sandbox)]
    overrides.setdefault("SandboxKernelManager", {}).update({k: v for k, v in typed if v is not None})
    timeout = overrides.get("GuardedExecute", {}).get("timeout")
    kernel = dict(overrides["SandboxKernelManager"])
    settings = settings_in_force(overrides)
    # (A bad due date, rule or extensions file is refused before anything is graded.)
    policy = late.policy_from(nbgrader_config(Path("."), overrides=overrides))
    try:  # (a bad setting of the export's reading, such as an unknown --blackboard-zone, too)
        reading = Collect(config=nbgrader_config(Path("."), overrides=overrides))
    except TraitError as error:
        raise ValueError(str(error)) from None
    log.debug("grading under %s", ", ".join(f"{k}={v}" for k, v in settings.items() if "." not in k))
    printer = pdf_pages.check_chromium(chromium) if pdf else None  # (now, not after an hour of grading)
    if settings["sandbox"] and scheduler is None:  # (Dask workers check on their own machines)
        protected = {"the repository": REPO, "the submissions": submissions, "--out": out}
        if settings.get("SandboxKernelManager.sandbox_mode") == "user":
            problem = check_user_sandbox(protected)[0]
        else:
            problem = check_sandbox(protected)
            if problem is not None and os.geteuid() == 0:
                problem += (" As root, --sandbox-user runs each kernel as an unprivileged user of its own instead "
                            "(weaker: see the README).")
        if problem is not None:
            raise SandboxUnavailable(problem)
    known = assignment_ids()
    unknown = sorted(set(assignments or []) - set(known))
    if unknown:
        raise ValueError(f"unknown assignment(s) {', '.join(unknown)}; known: {', '.join(known)}")
    foreign = output_folder.not_ours(out) if out.exists() else []
    if foreign:
        raise ValueError(
            f"refusing to grade into {out}: {', '.join(foreign)} there {'is' if len(foreign) == 1 else 'are'} not the "
            f"grader's (no {MARKER} marker) and would be replaced. Choose another --out (an empty or new folder, or "
            "one an earlier run wrote).")
    output_folder.mark(out)  # (before collecting: an --out inside the submissions folder is no student)
    output_folder.prepare(out)
    # Each run is written into a fresh folder and swapped in at the end: a run that fails changes nothing.
    fresh = output_folder.fresh_run(out)
    try:
        result = _grade_into(fresh, submissions, out, assignments, progress, jobs, roster, student_pattern, timeout,
                             scheduler, kernel, settings, lms, started, overrides, policy, reading, gradebook, printer)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    output_folder.swap_in(fresh, out)
    return result


def _grade_into(fresh: Path, submissions: Path, out: Path, assignments: list[str] | None, progress: bool,
                jobs: int | None, roster: Path | None, student_pattern: str | None, timeout: int | None,
                scheduler: str | None, kernel: dict, settings: dict, lms: str | None, started: float,
                overrides: dict, policy: tuple, reading: Collect, gradebook: Path | None = None,
                printer: str | None = None) -> GradeResult:
    """Grade into `fresh`, reusing the results kept in `out` by the last run; print PDFs with Chromium `printer`."""
    known = assignment_ids()
    for name in OWN_FOLDERS:
        if name != pdf_pages.PDF_FOLDER or printer:
            output_folder.mark(fresh / name)
    collected = collect(submissions, fresh / "submitted", assignments or known, student_pattern, roster, lms,
                        reading)
    write_unmatched(collected.unmatched, fresh / "unmatched.csv")
    chosen = assignments or sorted({a for _, a in collected.submissions}) or known
    if policy[0].due_date() is not None and len(chosen) > 1:  # (else one assignment's date would charge the others)
        raise ValueError(f"a due date (--due, c.LatePolicy.due) is one assignment's, and this run grades "
                         f"{len(chosen)}: {', '.join(chosen)}. Grade one with --assignment.")
    found = {(s, a): collected.submissions.get((s, a)) for s in collected.students for a in chosen}
    base = fresh / "nbgrader"

    results: dict[tuple[str, str], Graded] = {}
    for (student, assignment), notebook in found.items():
        if notebook is None:
            results[(student, assignment)] = Graded(same_for_all(
                student, assignment, Status.MISSING, f"no notebook for {assignment} in the submission"))
    # Results of earlier runs are reused when nothing a grade depends on changed: re-running is idempotent and a
    # late submission is graded alone.
    keys = {key: cache.key_parts(found[key], key[1], settings) for key in found if key not in results}
    for key, parts in keys.items():
        cached = cache.load_result(out, *key, parts)
        if cached is not None:
            log.debug("reused the result of %s's %s: nothing it depends on changed", *key)
            results[key] = cached
            cache.save_result(fresh, *key, parts, cached)  # (kept for the next run: this run's folder replaces out)
    todo = {key: found[key] for key in found if key not in results}
    reused = len(keys) - len(todo)
    jobs = max(1, min(jobs or default_jobs(), len(todo) or 1))
    with logging_redirect_tqdm(loggers=[logging.getLogger("autograde")]):  # log lines above the bar, not through it
        with tqdm(total=len(todo), desc="grading", unit="notebook", disable=not progress) as bar:
            def done(key: tuple[str, str], outcome: Future | Graded) -> None:
                """Record (and keep for later runs) one submission's result: a Graded, or a future that gives one."""
                if isinstance(outcome, Future):
                    try:
                        outcome = outcome.result()
                    except SandboxUnavailable:
                        raise
                    except Exception as e:  # the worker machine was lost (Dask), or the grader failed outside a notebook
                        log.warning("grading %s's %s failed: %s: %s", *key, type(e).__name__, e)
                        outcome = worker.grader_failure(*key, e)
                results[key] = outcome
                for note in outcome.notes:
                    log.debug("%s's %s: %s", *key, note)
                if outcome.keep:
                    cache.save_result(fresh, *key, keys[key], outcome)
                bar.update()

            def lost(key: tuple[str, str]) -> None:
                done(key, worker.grader_failure(*key, RuntimeError(
                    "the worker process grading it was lost twice (killed, or out of memory)")))

            _grade_on_executor(todo, done, lost, base, jobs, scheduler, timeout, kernel, overrides)
    rows = [row for key in found for row in results[key].rows]
    notes = {key: collected.notes.get(key, []) + results[key].notes for key in found
             if collected.notes.get(key) or results[key].notes}
    # Late penalties after grading, never in the cache: a changed due date or extension applies at once.
    lateness = late.assess(rows, collected.times, *policy, collected.lms_ids, gradebook)
    write_csvs(rows, fresh, collected.lms_ids, lateness)
    write_notes(notes, fresh / "notes.csv", collected.lms_ids)
    pages = write_feedback(rows, fresh / "feedback", notes, collected.lms_ids, lateness)
    similar = _similarity(collected.submissions, chosen, fresh, overrides)
    write_report(rows, fresh / "report.html", time.perf_counter() - started, len(todo), notes, lateness=lateness,
                 similarity=similar)
    if printer:
        _pdfs(fresh, {p.stem: p for p in pages}, collected, printer, progress)
    return GradeResult(rows, len(todo), reused, notes, collected.unmatched, collected.layout, lateness)


def _pdfs(fresh: Path, pages: dict[str, Path], collected: Collected, printer: str, progress: bool) -> None:
    """Print the feedback pages and the report to PDF (:mod:`autograde.pages.pdf`); a failure of the printing is
    said and leaves no PDF, but never costs the grades, which are written whatever happens here."""
    try:
        pdf_pages.write_pdfs(fresh, pages, fresh / "report.html", collected.lms_ids, collected.names,
                             collected.lms, printer, progress)
    except Exception as error:
        log.warning("no PDFs: %s: %s (the grades and the HTML feedback are written)", type(error).__name__, error)
        shutil.rmtree(fresh / pdf_pages.PDF_FOLDER, ignore_errors=True)
        for name in (pdf_pages.REPORT_PDF, pdf_pages.MOODLE_ZIP):
            (fresh / name).unlink(missing_ok=True)


def _similarity(notebooks: dict[tuple[str, str], Path], assignments: list[str], fresh: Path,
                overrides: dict) -> dict | None:
    """Write the similarity report (:mod:`autograde.pages.similarity`) unless it is switched off; its summary for
    report.html. It reads the submissions only: no grade depends on it, and a failure of it fails no grading."""
    settings = Similarity(config=nbgrader_config(Path("."), overrides=overrides))
    if not settings.enabled:
        return None
    try:
        return write_similarity(notebooks, assignments, fresh, settings)
    except Exception as error:  # (flags, never grades: the grades are written whatever happens here)
        log.warning("no similarity report: %s: %s", type(error).__name__, error)
        for name in ("similarity.csv", "similarity.html"):  # (no half-written report)
            (fresh / name).unlink(missing_ok=True)
        return None


def _grade_on_executor(todo: dict[tuple[str, str], Path], done, lost, base: Path, jobs: int, scheduler: str | None,
                       timeout: int | None, kernel: dict, overrides: dict | None = None) -> None:
    """Grade the notebooks `todo` on the executor the options choose: Dask's, a process pool, or this process."""
    cores = default_jobs()
    if scheduler is not None:
        from distributed import Client

        with Client(scheduler, timeout="30s") as client:
            log.info("grading on the Dask cluster at %s (%d worker(s))", scheduler,
                     len(client.scheduler_info().get("workers", {})))
            # The notebook travels as bytes: the worker may be on another machine.
            tasks = {key: (*key, path.read_bytes(), 1, timeout, kernel, overrides, load_config())
                     for key, path in todo.items()}
            run_all(worker.grade_remote, tasks, lambda: client.get_executor(pure=False), done, lost)
    elif jobs == 1:
        # One submission at a time, in this process (its one thread may use every core for NumPy and PyTorch).
        worker.start(base, cores, timeout, kernel, overrides)
        tasks = {key: (*key, path) for key, path in todo.items()}
        run_all(worker.grade_submission, tasks, lambda: ThreadPoolExecutor(1), done, lost)
    else:
        log.debug("grading in %d worker processes", jobs)
        tasks = {key: (*key, path) for key, path in todo.items()}
        context = multiprocessing.get_context("spawn")  # no zmq or sqlite state inherited from here
        initargs = (base, max(1, cores // jobs), timeout, kernel, overrides, load_config())
        run_all(worker.grade_submission, tasks,
                lambda: ProcessPoolExecutor(jobs, mp_context=context, initializer=boot.start_pool_worker,
                                            initargs=initargs),
                done, lost, running=lambda: worker.running_in(base, worker.scratch_base(timeout, kernel, overrides)))
