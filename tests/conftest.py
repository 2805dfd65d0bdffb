"""Shared fixtures: the book's build, and the graded batches of synthetic submissions, each graded when first asked for.

Only fixtures (and the check that tests using them are marked) live here; what
they grade is made by tests/support/batches.py, which also says where the
graded results are kept between runs.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograde.course import EXERCISES, REPO, SOLUTIONS, assignment_ids
from tests.support import batches, scenarios, testrun
from tests.support.commands import repo_copy
from tests.support.submissions import digest
from tests.support.verdicts import SAMPLED_MUTANTS, chapter_verdicts

HTML = REPO / "_build" / "html"
JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"
BATCH_FIXTURES = {"graded", "graded_fresh", "grade_chapter"}  # the fixtures that grade: slow, in the sandbox


class BookBuild:
    """The book's build (`make book`'s command: strict, cached execution), started as soon as the tests are
    collected if any selected test needs it, so that it executes its pages while the first tests grade.

    One build per test run, also with pytest-xdist's workers: the first process of the run to need it claims it
    (a file made with O_EXCL in the run's folder, :mod:`tests.support.testrun`) and starts it in a shell that
    writes its exit status to a file; every process waits for that file. Only the process that made the run's
    folder stops a build still running when the run ends.
    """

    def __init__(self, owner: bool):
        self.owner = owner
        folder = testrun.run_folder()
        self.claim, self.log, self.status = folder / "book-claim", folder / "book-build.log", folder / "book-status"

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session):
        if any("book" in getattr(item, "fixturenames", ()) for item in session.items):
            self.start()

    def pytest_unconfigure(self):
        if not self.owner:
            return
        try:
            if not self.status.exists():  # (an interrupted run leaves no build running)
                os.killpg(int(self.claim.read_text()), signal.SIGKILL)
        except (OSError, ValueError):
            pass
        testrun.end_run()

    def start(self) -> None:
        try:
            claim = os.open(self.claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return  # another process of this run started it
        proc = subprocess.Popen(
            ["sh", "-c", '"$0" build . -W -n --keep-going >"$1" 2>&1; echo $? >"$2.part" && mv "$2.part" "$2"',
             str(JUPYTER_BOOK), str(self.log), str(self.status)], cwd=REPO, start_new_session=True)
        os.write(claim, str(proc.pid).encode())
        os.close(claim)

    def wait(self, timeout: float) -> tuple[int, str]:
        """The build's exit status and the end of its output, once it has ended."""
        self.start()
        deadline = time.monotonic() + timeout
        while not self.status.exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"the book's build did not end within {timeout} s (its log: {self.log})")
            time.sleep(0.5)
        return int(self.status.read_text()), self.log.read_text(errors="replace")[-10000:]


def pytest_configure(config):
    config.pluginmanager.register(BookBuild(owner=testrun.start_run()), "book-build")


def pytest_terminal_summary(terminalreporter):
    """Name the kept scenarios this run checked from an earlier run's outcome instead of running them live."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        names = scenarios.replayed()
        terminalreporter.write_line(
            f"kept scenarios replayed from an earlier run (not run live): {', '.join(names)}" if names else
            "kept scenarios: every one used ran live in this run")


def pytest_runtest_setup(item):
    scenarios.USED.clear()  # (what this test uses of the kept scenarios, from here on)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A kept scenario one of whose tests failed is dropped, so that the next run runs it again: a failure, perhaps
    of a loaded moment, is never kept (:mod:`tests.support.scenarios`)."""
    report = yield
    if report.failed:
        used = set(scenarios.USED) | {getattr(value, "kept_as", None) for value in getattr(item, "funcargs", {}).values()
                                      if isinstance(getattr(value, "kept_as", None), str)}
        for name in used:
            scenarios.drop(name)
    return report


@pytest.fixture(scope="session")
def book(pytestconfig):
    """The HTML folder of the book, built as `make book` does (strict, cached execution).

    Session-wide: the book tests and the browser tests share one build, which
    started when the tests were collected (:class:`BookBuild`).
    """
    returncode, output = pytestconfig.pluginmanager.get_plugin("book-build").wait(timeout=1800)
    assert returncode == 0, f"the book does not build strictly:\n{output}"
    return HTML


def pytest_collection_modifyitems(items):
    """A test that uses a graded batch is slow and runs student code in the sandbox: it must say so.

    Markers are what `pytest -m "not slow"` selects on, so a missing one would
    put minutes into the quick run; this makes forgetting one an error at once.
    """
    unmarked = [item.nodeid for item in items if BATCH_FIXTURES & set(getattr(item, "fixturenames", ()))
                and not {"slow", "sandbox"} <= {m.name for m in item.iter_markers()}]
    if unmarked:
        raise pytest.UsageError(f"tests that use a graded batch ({', '.join(sorted(BATCH_FIXTURES))}) must be marked "
                                "slow and sandbox: " + ", ".join(unmarked[:5]))
    unmarked = [item.nodeid for item in items if "in_process_verdicts" in getattr(item, "fixturenames", ())
                and not item.get_closest_marker("slow")]
    if unmarked:
        raise pytest.UsageError("tests that use in_process_verdicts run whole notebooks and must be marked slow: "
                                + ", ".join(unmarked[:5]))


@pytest.fixture(scope="session")
def grade_chapter(tmp_path_factory):
    """``grade_chapter(assignment)``: chapter `assignment`'s batch (see :func:`tests.support.batches.write_chapter`),
    graded the first time any test asks for it, as a :class:`tests.support.batches.Batch`.

    A session that selects one chapter's tests grades that chapter only.
    """
    scratch = tmp_path_factory.mktemp("chapters")
    done: dict[str, batches.Batch] = {}

    def graded(assignment: str) -> batches.Batch:
        if assignment not in done:
            if assignment not in assignment_ids():
                raise KeyError(f"no chapter {assignment!r}: {assignment_ids()}")
            picked = [path for a, _, path in SAMPLED_MUTANTS if a == assignment]  # (the others: in-process)
            done[assignment] = testrun.once_per_run(f"chapter-{assignment}", lambda: batches.grade_cached(
                f"chapter-{assignment}", lambda folder: batches.write_chapter(folder, assignment, picked), scratch,
                jobs=batches.CHAPTER_JOBS, options=batches.CHAPTER_OPTIONS))
        return done[assignment]

    return graded


@pytest.fixture(scope="session")
def in_process_verdicts():
    """``in_process_verdicts(assignment, alternatives=False)``: ``{student: {test cell: (passed, message)}}`` for the
    reference, the untouched notebook and every mutant of a chapter (or, with `alternatives`, the reference and every
    alternative), decided in-process (:mod:`tests.support.verdicts`) the first time a test asks for that chapter."""
    return chapter_verdicts


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    """Chapter 1's broken, damaged and hostile submissions (:func:`tests.support.batches.write_odd`), graded once."""
    return testrun.once_per_run("odd", lambda: batches.grade_cached("odd", batches.write_odd,
                                                                     tmp_path_factory.mktemp("odd"),
                                                                     timeout=batches.ODD_TIMEOUT))


@pytest.fixture(scope="session")
def graded_fresh():
    """The few submissions whose tests read what the run itself did (:func:`tests.support.batches.write_fresh`),
    graded from nothing (once for all of a run's processes), with ``escaped`` and ``scratch_left_behind``
    recorded; a kept scenario (:mod:`tests.support.scenarios`): a rerun with nothing changed reads what was seen."""
    return testrun.once_per_run("fresh", lambda: scenarios.kept("fresh-batch", batches.__file__, batches.grade_fresh))


@pytest.fixture(scope="session")
def compiled_course(tmp_path_factory):
    """A copy of the course in which `python -m autograde compile` (what `make exercises` runs) wrote everything.

    The copy's exercises/ is removed first, so every student notebook there was
    written by the command; the repository itself must not change.
    """
    return testrun.once_per_run("compiled-course", lambda: _compiled_course(tmp_path_factory.mktemp("course")))


def _compiled_course(folder: Path) -> Path:
    course = repo_copy(folder)
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
