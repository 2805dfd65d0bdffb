"""Grading does not depend on what else runs on the machine (issue 21).

A cell's time limit must not be spent waiting for a CPU that other programs
hold: a correct answer on a busy grading server keeps its points. The starved
case runs the grader and its kernel on one core beside busy loops pinned to
that same core, which is what a loaded machine does to a kernel, made certain.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import nbformat
import pytest

from autograde.__main__ import GradeApp
from autograde.batch.worker import FAILED
from autograde.course import REPO, assignment_ids, cells_checking, graded_cell_ids, source_notebook
from autograde.grade import settings_in_force
from autograde.reference import solution_code
from autograde.run.cgroups import memory_cgroup_parent
from autograde.run.execute import CellClock, run_queue_wait
from tests.support.commands import read_rows
from tests.support.scenarios import kept
from tests.support.scratch import ScratchWatch, scratch_left, worker_pid
from tests.support.synthetic import completed_notebook, write_submission

FIRST = assignment_ids()[0]
LIMIT = 3  # seconds per cell in the starved run
BURN = 1.5  # seconds of CPU the slow correct answer uses: half its limit
COMPETITORS = 3  # busy loops on the kernel's core: it gets a quarter of it, so BURN takes about 6 s of wall clock
SLEEP = 120  # a cell that sleeps this long must still be stopped at LIMIT (sleeping is not waiting for a CPU)


def reference(grade_id: str) -> str:
    """The reference answer of chapter 1's `grade_id`."""
    cell = next(c for c in source_notebook(FIRST).cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    return solution_code(cell.source)


def burning(grade_id: str, seconds: float) -> str:
    """The reference answer after `seconds` of CPU time spent in a busy loop (a correct, slow answer)."""
    return (f"import time as _time\n_start = _time.process_time()\nwhile _time.process_time() - _start < {seconds}:\n"
            f"    pass\n" + reference(grade_id))


def wall_seconds(notebook: Path, grade_id: str) -> float:
    """How long the cell `grade_id` of an executed notebook ran by the wall clock (nbclient's timing record)."""
    cell = next(c for c in nbformat.read(notebook, as_version=4).cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    timing = cell.metadata["execution"]
    start, end = (datetime.fromisoformat(timing[k].replace("Z", "+00:00"))
                  for k in ("iopub.execute_input", "shell.execute_reply"))
    return (end - start).total_seconds()


@pytest.fixture(scope="module")
def starved():
    """Chapter 1 graded with a LIMIT-second cell limit on one core shared with COMPETITORS busy loops.

    Student ``slow-but-correct`` burns BURN s of CPU in its softmax answer;
    ``sleeper`` sleeps SLEEP s in it. The busy loops are ended whatever happens.
    (A kept scenario: :mod:`tests.support.scenarios`.)
    """
    return kept("starved-core", __file__, _grade_starved)


def _grade_starved(base: Path) -> dict:
    write_submission(completed_notebook(FIRST, {"softmax": burning("softmax", BURN)}), base / "class",
                     "slow-but-correct", FIRST)
    write_submission(completed_notebook(FIRST, {"softmax": f"import time\ntime.sleep({SLEEP})\n" + reference("softmax")}),
                     base / "class", "sleeper", FIRST)
    core = max(os.sched_getaffinity(0))
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(COMPETITORS)]
    try:
        for process in busy:
            os.sched_setaffinity(process.pid, {core})
        proc = subprocess.run(
            [sys.executable, "-m", "autograde", "grade", str(base / "class"), "--out", str(base / "out"), "--quiet",
             "--jobs", "1", "--timeout", str(LIMIT)],
            cwd=REPO, capture_output=True, text=True, timeout=900, preexec_fn=lambda: os.sched_setaffinity(0, {core}))
    finally:
        for process in busy:
            process.kill()
            process.wait()
    assert proc.returncode == 0, proc.stderr
    scores = {(r["student_id"], r["grade_id"]): r for r in read_rows(base / "out" / "scores.csv")}
    return {"scores": scores, "out": base / "out", "stderr": proc.stderr}


def executed(out: Path, student: str) -> Path:
    """The executed (autograded) notebook of `student` in a grading run's --out folder."""
    found = list(out.glob(f"nbgrader/worker-*/autograded/{student}/{FIRST}/{FIRST}.ipynb"))
    # Where nbgrader failed on the notebook, its log is kept instead: show it, so that the cause can be read.
    failed = [f.read_text()[-3000:] for f in out.glob(f"nbgrader/worker-*/{FAILED}/{student}/{FIRST}/autograde.log")]
    assert len(found) == 1, (f"expected one executed notebook of {student} under {out}/nbgrader, found {found}; "
                             f"nbgrader's log of its failure: {failed}")
    return found[0]


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_correct_answer_starved_of_cpu_keeps_its_points(starved):
    wall = wall_seconds(executed(starved["out"], "slow-but-correct"), "softmax")
    # The starvation is real: the answer took far longer by the wall clock than the CPU time it needs.
    assert wall > 1.5 * BURN, f"the busy loops did not slow the kernel down (softmax took {wall:.1f} s); nothing is proved"
    rows = [r for (s, _), r in starved["scores"].items() if s == "slow-but-correct"]
    lost = [(r["grade_id"], r["status"], r["message"]) for r in rows if r["status"] != "passed"]
    assert not lost, (f"a correct answer using {BURN} s of CPU (limit {LIMIT} s) lost points because the machine was "
                      f"busy (it ran {wall:.1f} s by the wall clock): {lost}")


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_sleeping_cell_is_still_stopped_at_the_limit(starved):
    own = cells_checking("softmax", graded_cell_ids(FIRST))
    rows = [starved["scores"][("sleeper", c)] for c in own]
    assert all(r["status"] == "timeout" and float(r["score"]) == 0 for r in rows), rows
    wall = wall_seconds(executed(starved["out"], "sleeper"), "softmax")
    # Sleeping is not waiting for a CPU: it counts, so the cell ends near its limit, not at the wall-clock cap.
    assert wall < 4 * LIMIT, f"a cell sleeping {SLEEP} s was stopped only after {wall:.1f} s (limit {LIMIT} s)"
    others = [r for (s, c), r in starved["scores"].items() if s == "sleeper" and "softmax" not in c]
    assert others and all(r["status"] == "passed" for r in others), [r for r in others if r["status"] != "passed"]


# The clock itself, with a fake wall clock and run queue -----------------------------------------------------------

class FakeMachine:
    """A wall clock and a kernel's run-queue time that the test moves by hand."""

    def __init__(self, readable: bool = True):
        self.now, self.queued, self.readable = 100.0, 7.0, readable

    def run(self, seconds: float, waiting: float = 0.0) -> None:
        """`seconds` pass, of which the kernel spent `waiting` in the run queue."""
        self.now += seconds
        self.queued += waiting

    def clock(self, limit, wall_deadline=None) -> CellClock:
        return CellClock(limit, wall_deadline, lambda: self.queued if self.readable else None, now=lambda: self.now)


def test_on_a_quiet_machine_the_limit_is_the_wall_clock():
    machine = FakeMachine()
    clock = machine.clock(limit=20)
    machine.run(19.9)
    assert not clock.expired() and clock.charged() == pytest.approx(19.9)
    assert clock.next_check() == pytest.approx(0.1), "the clock must be looked at again when the limit can be reached"
    machine.run(0.1)
    assert clock.expired(), "a cell of 20 s on a quiet machine must be stopped at a 20 s limit"


def test_time_spent_waiting_for_a_cpu_is_not_counted():
    machine = FakeMachine()
    clock = machine.clock(limit=20, wall_deadline=machine.now + 200)
    machine.run(60, waiting=45)  # a quarter of a core: 15 s of running in a minute
    assert not clock.expired(), f"charged {clock.charged()} s for 15 s of running and 45 s of waiting for a CPU"
    assert clock.charged() == pytest.approx(15)
    machine.run(20, waiting=15)
    assert clock.expired(), "20 s of running must reach a 20 s limit, however long the wait around it"


def test_the_wall_clock_cap_ends_a_cell_whatever_it_was_charged():
    machine = FakeMachine()
    clock = machine.clock(limit=20, wall_deadline=machine.now + 200)
    machine.run(199, waiting=198)
    assert not clock.expired()
    machine.run(1, waiting=1)
    assert clock.expired() and clock.past_wall_deadline(), "the wall-clock cap must stop a cell that only waited"


def test_without_a_run_queue_reading_the_clock_is_the_wall_clock():
    machine = FakeMachine(readable=False)
    clock = machine.clock(limit=20)
    machine.run(20, waiting=15)
    assert clock.expired(), "where the wait cannot be read, the limit must be plain wall-clock time (as before)"


def test_cpu_the_kernels_own_processes_use_is_charged_even_while_its_main_thread_waits():
    # Busy children of the kernel's own make its main thread wait for a CPU: that wait must not buy time.
    machine = FakeMachine()
    used = {"cpu": 3.0}
    clock = CellClock(20, machine.now + 200, lambda: machine.queued, now=lambda: machine.now, cpu=lambda: used["cpu"])
    machine.run(8, waiting=7)  # the main thread ran 1 s of 8 ...
    used["cpu"] += 16  # ... while the kernel's processes used 2 cores throughout
    assert clock.charged() == pytest.approx(16), "the CPU its own processes used is what the cell is charged"
    machine.run(2, waiting=2)
    used["cpu"] += 4
    assert clock.expired(), "20 s of CPU used by the cell's own processes must reach a 20 s limit"


def test_a_single_thread_is_charged_as_before():
    machine = FakeMachine()
    used = {"cpu": 0.0}
    clock = CellClock(20, machine.now + 200, lambda: machine.queued, now=lambda: machine.now, cpu=lambda: used["cpu"])
    machine.run(60, waiting=45)
    used["cpu"] += 15  # one thread, a quarter of a core: its CPU is its running time
    assert clock.charged() == pytest.approx(15) and not clock.expired()
    assert clock.next_check() <= 5 / (os.cpu_count() or 1) + 1e-9, "all the cores could use the 5 s left at once"


def test_the_cpu_of_a_process_tree_is_counted():
    from autograde.run.clock import tree_cpu_seconds

    child = subprocess.Popen([sys.executable, "-c", "import time\ns = time.process_time()\n"
                              "while time.process_time() - s < 0.5: pass\ntime.sleep(30)"])
    try:
        before = tree_cpu_seconds(os.getpid())
        deadline = time.monotonic() + 20
        while tree_cpu_seconds(os.getpid()) - before < 0.4 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert tree_cpu_seconds(os.getpid()) - before >= 0.4, "a child's CPU is not counted in its parent's tree"
    finally:
        child.kill()
        child.wait()
    assert tree_cpu_seconds(2**31 - 1) is None, "a process that does not exist must give None, not a number"


def test_the_cpu_of_a_cgroups_processes_is_counted(tmp_path):
    from autograde.run.clock import cgroup_cpu_seconds

    child = subprocess.Popen([sys.executable, "-c", "import time\ns = time.process_time()\n"
                              "while time.process_time() - s < 0.5: pass\ntime.sleep(30)"])
    try:
        # A cgroup's member list, as cgroupfs gives it: the child, and a process that ended since it was listed.
        (tmp_path / "cgroup.procs").write_text(f"{child.pid}\n{2**31 - 1}\n")
        deadline = time.monotonic() + 20
        while cgroup_cpu_seconds(str(tmp_path)) < 0.4 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert cgroup_cpu_seconds(str(tmp_path)) >= 0.4, "the CPU of a cgroup's member is not counted"
        assert cgroup_cpu_seconds(str(tmp_path)) < 5, "more counted than the member used (what else was counted?)"
    finally:
        child.kill()
        child.wait()
    assert cgroup_cpu_seconds(str(tmp_path / "gone")) is None, "a cgroup that cannot be read must give None"
    # cgroup v2 counts it itself, exited processes included: its count is taken, not the members' sum.
    (tmp_path / "cpu.stat").write_text("usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n")
    assert cgroup_cpu_seconds(str(tmp_path)) == pytest.approx(2.5)


def test_the_clock_counts_the_kernels_cgroup_where_it_has_one(monkeypatch):
    from autograde.run import execute, time_limits

    def tree(pid):
        raise AssertionError("the process tree was read, though the kernel's cgroup counts its processes")

    monkeypatch.setattr(time_limits, "tree_cpu_seconds", tree)
    used = {"cpu": 5.0}

    class Kernel:
        threads = 1

        def kernel_pid(self):
            return os.getpid()

        def cpu_seconds(self):
            return used["cpu"]

    executor = execute.GuardedExecute(timeout=10)
    executor.km = Kernel()
    clock = executor._clock(nbformat.v4.new_code_cell("x = 1"))
    used["cpu"] += 3
    assert clock.cpu_used() == pytest.approx(3)


def test_a_cell_whose_reply_was_read_is_not_stopped_when_its_clock_runs_out():
    # The clock runs out while nbclient, the reply read, waits for the kernel to go idle: the cell answered in time
    # and keeps its reply (review of the watchdog: a passing test was scored as timed out). Unread, it is stopped.
    import asyncio

    from autograde.run import execute
    from autograde.run.clock import CellClock

    def watched(replied: bool):
        executor = execute.GuardedExecute(timeout=10)
        stopped = []

        async def handle_timeout(timeout, cell=None):
            stopped.append(cell)
            return {"content": {"status": "error", "ename": "CellTimeoutError"}}

        executor._async_handle_timeout = handle_timeout
        now = {"t": 0.0}
        clock = CellClock(1.0, None, lambda: 0.0, now=lambda: now["t"])
        now["t"] = 5.0  # out of time

        async def main():
            waiting = asyncio.ensure_future(asyncio.sleep(0.05, result="the kernel's reply"))
            outcome = await executor._watch(waiting, clock, None, grace=2.0, replied=lambda: replied)
            return outcome, waiting.result()

        return asyncio.run(main()), stopped

    ((expired, _), reply), stopped = watched(replied=True)
    assert not expired and not stopped and reply == "the kernel's reply", "a cell that answered in time was stopped"
    ((expired, made), reply), stopped = watched(replied=False)
    assert expired and stopped == [None] and made["content"]["ename"] == "CellTimeoutError", "an unanswered cell ran on"


def test_the_run_queue_of_a_process_can_be_read():
    if not Path(f"/proc/{os.getpid()}/schedstat").exists():
        pytest.skip("this kernel keeps no scheduler statistics (/proc/<pid>/schedstat): the limit is wall-clock time")
    assert isinstance(run_queue_wait(os.getpid()), float) and run_queue_wait(os.getpid()) >= 0
    assert run_queue_wait(2**31 - 1) is None, "a process that does not exist must give None, not a number"


# Each grading run's scratch folders where it is told -------------------------------------------------------------

@pytest.fixture(scope="module")
def own_scratch():
    """Two chapter-1 notebooks graded by two workers with ``--scratch``, the scratch folders watched meanwhile (a
    kept scenario: :mod:`tests.support.scenarios`)."""
    return kept("own-scratch", __file__, _grade_with_own_scratch)


def _grade_with_own_scratch(base: Path) -> dict:
    for student in ("one", "two"):
        write_submission(completed_notebook(FIRST), base / "class", student, FIRST)
    scratch, shared = base / "scratch", Path(tempfile.gettempdir())
    with ScratchWatch(scratch, shared) as watch:
        proc = subprocess.run([sys.executable, "-m", "autograde", "grade", str(base / "class"), "--out",
                               str(base / "out"), "--quiet", "--jobs", "2", "--scratch", str(scratch)],
                              cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return {"scratch": scratch, "shared": shared, "seen": watch.seen, "out": base / "out",
            "left": scratch_left(scratch)}


@pytest.mark.slow
@pytest.mark.sandbox
def test_kernels_scratch_folders_go_where_the_run_says_and_are_removed(own_scratch):
    scratch, seen = own_scratch["scratch"], own_scratch["seen"]
    assert seen[scratch], f"no kernel scratch folder appeared in {scratch} (--scratch) while grading"
    workers = {worker_pid(name) for name in seen[scratch]}
    strays = sorted(n for n in seen[own_scratch["shared"]] if worker_pid(n) in workers)
    assert not strays, f"this run's workers {workers} still made scratch folders in the shared temp folder: {strays}"
    assert own_scratch["left"] == [], f"kernel scratch folders left behind: {own_scratch['left']}"
    assert {r["status"] for r in read_rows(own_scratch["out"] / "scores.csv")} == {"passed"}


def test_the_scratch_folder_is_an_option_that_changes_no_grade():
    app = GradeApp()
    app.parse_command_line(["class", "--out", "out", "--scratch", "/somewhere/else"])
    assert app.typed() == {"SandboxKernelManager": {"scratch_base": "/somewhere/else"}}, app.typed()
    # Where scratch folders go is not in the cache key: a run with its own scratch base reuses earlier results.
    assert settings_in_force(app.typed()) == settings_in_force(), "--scratch changed the settings the cache keys on"
    assert settings_in_force({"SandboxKernelManager": {"memory_mib": 1024}}) != settings_in_force(), \
        "the cache key no longer sees the kernel's settings at all"


# What a timed-out submission leaves to read ---------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.sandbox
def test_a_timed_out_notebook_keeps_its_executed_notebook_and_kernel_log(starved):
    notebook = executed(starved["out"], "sleeper")
    log = notebook.parent / "kernel.log"
    assert log.is_file() and log.read_text().strip(), f"no kernel log kept beside {notebook}"
    cell = next(c for c in nbformat.read(notebook, as_version=4).cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == "softmax")
    said = [o.get("evalue", "") for o in cell.outputs if o.get("output_type") == "error"]
    assert any(f"time limit of {LIMIT} s" in s and "waiting for a busy machine is not counted" in s for s in said), \
        f"the stopped cell does not tell the student its limit and how it is counted: {said}"


# The grader's own start-up in a kernel is not the student's time ------------------------------------------------

AGENT_START_CPU = 2.5  # seconds of CPU the (slowed) agent's start uses: more than the cell limit below


def _executor_with_slow_agent(monkeypatch, **settings):
    """GuardedExecute for chapter 1 (its test cells run in the checker), unsandboxed, whose agent's start in each
    kernel first burns AGENT_START_CPU seconds of CPU."""
    from traitlets.config import Config

    from autograde.run import execute
    from autograde.run.kernel_manager import SandboxKernelManager

    burn = (f"import time as _t\n_s = _t.process_time()\nwhile _t.process_time() - _s < {AGENT_START_CPU}:\n"
            "    pass\n")
    source = burn + execute._agent_source()
    monkeypatch.setattr(execute, "_agent_source", lambda: source)
    return execute.GuardedExecute(kernel_name="python3", kernel_manager_class=SandboxKernelManager,
                                  config=Config({"SandboxKernelManager": {"sandbox": False}}), **settings)


def _chapter_one(path) -> dict:
    return {"nbgrader": {"assignment": FIRST}, "metadata": {"path": str(path)}}


@pytest.mark.slow
def test_an_agent_slow_to_start_is_not_cut_off_by_the_cells_time_limit(monkeypatch, tmp_path):
    # A CI run on a starved core: the first kernel's start-up (the grader's code, before any student cell) needed
    # more than the 3 s cell limit, was interrupted, and the whole notebook scored as a timeout. Its start has a
    # limit of its own (agent_start_timeout); the students' cells keep theirs.
    executor = _executor_with_slow_agent(monkeypatch, timeout=1)
    assert executor.agent_start_timeout > AGENT_START_CPU  # (what makes the start succeed, not a lucky machine)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 6 * 7\nx")])
    ran, _ = executor.preprocess(notebook, _chapter_one(tmp_path))
    assert executor._plan is not None, "the notebook did not run with the checker: the agent was never started"
    assert ran.cells[0].outputs[0]["data"]["text/plain"] == "42"


@pytest.mark.slow
@pytest.mark.sandbox
def test_an_agent_that_does_not_start_costs_a_retry_not_the_students_points(tmp_path, monkeypatch):
    from autograde.grade import grade
    from autograde.run.execute import AGENT_NOT_STARTED, AgentNotStarted, GuardedExecute

    write_submission(completed_notebook(FIRST), tmp_path / "class", "unlucky", FIRST)
    genuine = GuardedExecute._start_agent

    def broken(self):
        raise AgentNotStarted(f"{AGENT_NOT_STARTED}: None: None")

    monkeypatch.setattr(GuardedExecute, "_start_agent", broken)
    mine = f"ag-{os.getpid()}-*"  # (--jobs 1 grades in this process: its kernels' scratch folders and cgroups)
    parent = memory_cgroup_parent()
    places = [Path(tempfile.gettempdir())] + ([Path(parent)] if parent else [])
    before = {p for place in places for p in place.glob(mine)}
    rows = grade(tmp_path / "class", tmp_path / "out", [FIRST], progress=False, jobs=1).rows
    assert {r.status for r in rows} == {"error"} and all("grade it again" in r.message for r in rows), rows[:2]
    left = {p for place in places for p in place.glob(mine)} - before
    assert not left, f"the kernel whose agent did not start was left behind: {sorted(map(str, left))}"
    monkeypatch.setattr(GuardedExecute, "_start_agent", genuine)
    result = grade(tmp_path / "class", tmp_path / "out", [FIRST], progress=False, jobs=1)
    assert {r.status for r in result.rows} == {"passed"} and (result.graded, result.reused) == (1, 0)


def test_the_graders_own_requests_past_the_notebooks_limit_are_given_their_own_time():
    # CI, a busy machine: the agent's start ran past the notebook's 1 s, nbconvert then asked the kernel for its info
    # with the notebook's deadline already gone, gave it 10 ms, and its `assert info_msg` failed the whole notebook.
    from autograde.run import execute

    executor = execute.GuardedExecute(timeout=30, notebook_timeout=1, agent_start_timeout=45)
    executor._deadline = time.monotonic() - 5  # the notebook's time ran out while the kernel started
    grader = executor._clock(None)
    assert grader.limit == 45 and not grader.expired(), "the kernel's info or the agent's start cut off at once"
    assert grader.next_check() > 1
    cell = executor._clock(nbformat.v4.new_code_cell("x = 1"))
    assert cell.expired(), "a student's cell past the notebook's limit must be out of time at once"


@pytest.mark.slow
def test_an_agent_starting_past_the_notebooks_limit_starts_and_the_cells_time_out(monkeypatch, tmp_path):
    # Past the notebook's limit (a rerun after a dead kernel, late in the notebook) the agent still starts: the cells
    # are then marked as not run at the notebook's limit, the student's timeout, never a failure of the grader's.
    executor = _executor_with_slow_agent(monkeypatch, timeout=30, notebook_timeout=1)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 6 * 7\nx")])
    ran, _ = executor.preprocess(notebook, _chapter_one(tmp_path))
    said = [o.get("evalue", "") for o in ran.cells[0].outputs if o.get("output_type") == "error"]
    assert any("notebook's time limit (1 s)" in s for s in said), ran.cells[0].outputs


# A time limit that passes inside a test cell, or a cell that ignores the interrupt (issue 30) --------------------

def _graded_notebook(answer: str, test: str):
    """An answer cell and a one-point test cell, as nbgrader marks them."""
    answer_cell = nbformat.v4.new_code_cell(answer, metadata={"nbgrader": {
        "solution": True, "grade": False, "grade_id": "answer", "locked": False, "schema_version": 3}})
    test_cell = nbformat.v4.new_code_cell(test, metadata={"nbgrader": {
        "solution": False, "grade": True, "grade_id": "test_answer", "points": 1, "locked": True,
        "schema_version": 3}})
    return nbformat.v4.new_notebook(cells=[answer_cell, test_cell])


@pytest.mark.slow
def test_a_test_cell_running_in_the_checker_when_the_notebooks_limit_passes_is_timed_out(tmp_path):
    # The test cell runs in the checker, which is waiting on the student's softmax (asleep in the kernel) when the
    # notebook's time runs out: the cell is stopped and scored as timed out, the cells after it as not run.
    from traitlets.config import Config

    from autograde.results.classify import Status, classify_cell
    from autograde.run import execute
    from autograde.run.kernel_manager import SandboxKernelManager

    notebook = completed_notebook(FIRST, {"softmax": "import time\n\ndef softmax(x, axis=-1):\n    time.sleep(120)\n"})
    executor = execute.GuardedExecute(timeout=300, notebook_timeout=12, kernel_name="python3",
                                      kernel_manager_class=SandboxKernelManager,
                                      config=Config({"SandboxKernelManager": {"sandbox": False}}))
    start = time.monotonic()
    ran, _ = executor.preprocess(notebook, _chapter_one(tmp_path))
    took = time.monotonic() - start
    by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in ran.cells}
    status, message = classify_cell(by_id["test_softmax"])[:2]
    assert status == Status.TIMEOUT, (status, message)
    said = [o.get("evalue", "") for o in by_id["test_softmax"].outputs if o.get("output_type") == "error"]
    assert any("notebook's time limit (12 s)" in s for s in said), f"the student is not told which limit: {said}"
    later = by_id["test_dot_scores"]
    assert execute.events(later)[execute.Event.TIMED_OUT].get("notebook_timeout") == 12, execute.events(later)
    assert took < 60, f"the notebook ran {took:.0f} s past a 12 s limit: the checker was not stopped with the cell"


@pytest.mark.slow
def test_a_cell_that_ignores_the_interrupt_times_out_alone_and_the_rest_is_graded():
    # Past its limit the kernel is interrupted; a cell that ignores SIGINT kept it busy past iopub_timeout, and the
    # CellTimeoutError escaped: every cell of the notebook scored "timeout", the tests that had passed too.
    from jupyter_client.manager import AsyncKernelManager

    from autograde.results.classify import Status, classify_cell
    from autograde.run import execute

    stuck = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(60)"
    notebook = _graded_notebook("x = 41 + 1", "assert x == 42")
    notebook.cells.insert(1, nbformat.v4.new_code_cell(stuck, metadata={"nbgrader": {
        "solution": True, "grade": False, "grade_id": "stuck", "locked": False, "schema_version": 3}}))
    notebook.cells.append(nbformat.v4.new_code_cell("assert x == 42", metadata={"nbgrader": {
        "solution": False, "grade": True, "grade_id": "test_after", "points": 1, "locked": True,
        "schema_version": 3}}))
    executor = execute.GuardedExecute(timeout=3, kernel_name="python3", kernel_manager_class=AsyncKernelManager)
    ran, _ = executor.preprocess(notebook, {"metadata": {"path": tempfile.gettempdir()}})
    assert execute.Event.TIMED_OUT in execute.events(ran.cells[1]), ran.cells[1].outputs
    said = " ".join(o.get("evalue", "") for o in ran.cells[1].outputs if o.get("output_type") == "error")
    assert "did not stop when interrupted" in said, said
    assert classify_cell(ran.cells[1])[0] == Status.TIMEOUT
    assert classify_cell(ran.cells[3]) is None, f"the test after the stuck cell did not pass: {ran.cells[3].outputs}"


def test_a_stuck_cell_is_noted_as_skipped_not_as_kept():
    # After a kill, what the cell "had defined by then" is gone: the note must not say it was kept.
    from autograde.results.classify import execution_notes
    from autograde.run.execute import Event, record

    notebook = _graded_notebook("x = 1", "assert x == 1")
    record(notebook.cells[0], Event.TIMED_OUT, stuck=True)
    notes = " ".join(execution_notes(notebook))
    assert "did not stop when interrupted" in notes and "was kept" not in notes, notes


@pytest.mark.slow
def test_a_cell_whose_children_keep_the_cpus_busy_is_charged_their_time(tmp_path):
    # The clock leaves out the time the kernel's main thread waits for a CPU; a cell that keeps every core busy with
    # processes of its own made its main thread wait, and so ran up to ten times its limit while starving the
    # machine. The CPU that the kernel's own processes use is charged to the cell (issue 30).

    from autograde.run import execute

    pids = tmp_path / "pids"  # (in pytest's folder, which it prunes: no ag-test-hog-* left in /tmp)
    hog = ("import os\n"
           "children = []\n"
           f"for _ in range({2 * (os.cpu_count() or 1)}):\n"
           "    child = os.fork()\n"
           "    if child == 0:\n"
           "        while True:\n"
           "            pass\n"
           "    children.append(child)\n"
           f"open({str(pids)!r}, 'w').write(' '.join(map(str, children)))\n"
           "while True:\n"
           "    pass\n")
    ran, took = _run_hog(hog, pids)
    assert execute.Event.TIMED_OUT in execute.events(ran.cells[0]), ran.cells[0].outputs
    assert took < 15, f"a cell whose children kept {os.cpu_count()} cores busy ran {took:.0f} s against a 3 s limit"


def _run_hog(hog: str, pids: Path):
    """Run the answer cell `hog` (which writes the pids it leaves behind to `pids`) under a 3 s limit, outside the
    sandbox but in the kernel's cgroups; (the executed notebook, seconds it took). Kills what it left behind."""
    from traitlets.config import Config

    from autograde.run import execute
    from autograde.run.kernel_manager import SandboxKernelManager

    executor = execute.GuardedExecute(timeout=3, kernel_name="python3", kernel_manager_class=SandboxKernelManager,
                                      config=Config({"SandboxKernelManager": {"sandbox": False}}))
    started = time.monotonic()
    try:
        ran, _ = executor.preprocess(_graded_notebook(hog, "assert True"), {"metadata": {"path": tempfile.gettempdir()}})
        return ran, time.monotonic() - started
    finally:
        for pid in (pids.read_text().split() if pids.is_file() else []):  # (whatever cleaning up left behind)
            try:
                os.kill(int(pid), 9)
            except ProcessLookupError:
                pass


def _orphan_hog(pids: Path) -> str:
    """A cell that leaves 2 busy processes per core outside its kernel's process tree (each forked twice, the
    middle one gone, so the machine's first process adopts it) and keeps its own main thread busy too."""
    return ("import os\n"
            f"for _ in range({2 * (os.cpu_count() or 1)}):\n"
            "    if os.fork() == 0:\n"
            "        if os.fork() == 0:\n"
            f"            with open({str(pids)!r}, 'a') as f:\n"
            "                f.write(f'{os.getpid()} ')\n"
            "            while True:\n"
            "                pass\n"
            "        os._exit(0)\n"
            "    os.wait()\n"
            "while True:\n"
            "    pass\n")


@pytest.mark.slow
def test_a_cell_whose_orphaned_processes_keep_the_cpus_busy_is_charged_their_time(tmp_path):
    # A process tree misses what left it: processes whose parent ended are adopted above the kernel. The kernel's
    # cgroup holds them all (no process can leave it), so their CPU is charged to the cell. (Counted as the tree
    # below the kernel's pid, as before, this cell ran 30 s: the clock's cap, 10 times its limit.)

    from autograde.run import execute

    if memory_cgroup_parent() is None:
        pytest.skip("this machine gives the grader no cgroup: the kernel's processes are counted as a tree")
    pids = tmp_path / "pids"  # (in pytest's folder, which it prunes: no ag-test-hog-* left in /tmp)
    ran, took = _run_hog(_orphan_hog(pids), pids)
    assert execute.Event.TIMED_OUT in execute.events(ran.cells[0]), ran.cells[0].outputs
    assert took < 15, (f"a cell whose orphaned processes kept {os.cpu_count()} cores busy ran {took:.0f} s against a "
                       "3 s limit")


@pytest.mark.slow
def test_a_cell_stuck_when_the_notebooks_time_runs_out_keeps_the_verdicts_before_it():
    # With no time left to run the notebook again, the rerun would have marked every cell "not run": the cells
    # before the stuck one keep what they earned; the stuck one and those after it are stopped at the limit.
    from jupyter_client.manager import AsyncKernelManager

    from autograde.results.classify import Status, classify_cell
    from autograde.run import execute

    stuck = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(60)"
    notebook = _graded_notebook("x = 41 + 1", "assert x == 42")
    notebook.cells.append(nbformat.v4.new_code_cell(stuck, metadata={"nbgrader": {
        "solution": True, "grade": False, "grade_id": "stuck", "locked": False, "schema_version": 3}}))
    notebook.cells.append(nbformat.v4.new_code_cell("assert x == 42", metadata={"nbgrader": {
        "solution": False, "grade": True, "grade_id": "test_after", "points": 1, "locked": True,
        "schema_version": 3}}))
    executor = execute.GuardedExecute(timeout=60, notebook_timeout=5, kernel_name="python3",
                                      kernel_manager_class=AsyncKernelManager)
    ran, _ = executor.preprocess(notebook, {"metadata": {"path": tempfile.gettempdir()}})
    assert classify_cell(ran.cells[1]) is None, f"the test before the stuck cell lost its pass: {ran.cells[1].outputs}"
    assert execute.events(ran.cells[2])[execute.Event.TIMED_OUT].get("notebook_timeout") == 5
    assert classify_cell(ran.cells[3])[0] == Status.TIMEOUT


def test_cpu_within_the_threads_the_grader_granted_is_not_charged(monkeypatch):
    # A kernel granted 2 threads (--jobs 1 on 2 cores) runs BLAS on both: only CPU beyond that pace is charged.
    from autograde.run import execute, time_limits

    used = {"cpu": 5.0}
    monkeypatch.setattr(time_limits, "tree_cpu_seconds", lambda pid: used["cpu"])

    class Kernel:
        threads = 2

        def kernel_pid(self):
            return os.getpid()

    executor = execute.GuardedExecute(timeout=10)
    executor.km = Kernel()
    clock = executor._clock(None)
    used["cpu"] += 8
    assert clock.cpu_used() == pytest.approx(4), "8 s of CPU on the 2 threads granted is 4 s of the cell's time"
