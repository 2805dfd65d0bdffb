"""Grading an instructor can trust blindly (issue 11).

The sandbox's process and disk limits, notes on cells stopped at the time
limit and on a dead kernel's last words, a batch that survives losing a worker
process, the settings grading runs under: proved through the real command,
grading real notebooks (the `limits` batch is the whole command end to end).
What the cache key holds and the refusal to grade into a folder the grader did
not write are proved by calling :mod:`autograde.results.cache` and
:func:`autograde.grade.grade` in-process. Collecting exports (zips, LMS
layouts) is in test_lms.py.
"""
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from autograde import course
from autograde.__main__ import GradeApp
from autograde.course import REPO, assignment_ids, cells_checking, graded_cell_ids, source_notebook
from autograde.grade import grade, settings_in_force
from autograde.results import cache
from autograde.results.cache import PACKAGE
from tests.support.commands import grade_command, grades_by_student, read_rows, repo_copy
from tests.support.scenarios import kept
from tests.support.synthetic import completed_notebook, write_submission

FIRST = assignment_ids()[0]
TIMEOUT = 6  # seconds per cell in the batch below; every reference cell of chapter 1 takes well under one (the
# answer that never finishes spends it in full)
DISK_MIB = 64
# Marks that let a test find, after grading, any process a submission started (as "sleep MARK").
MARK = f"{random.randrange(10**6, 10**7)}.{os.getpid()}"
OUTLIVE_MARK = f"{random.randrange(10**6, 10**7)}.{os.getpid() + 1}"

# Chapter 1 answers that misbehave, by student id, each replacing one answer cell of the reference.
MISBEHAVING = {
    # A bounded fork bomb (so that, without the limit, it stops by itself): children hold their slot as "sleep MARK".
    "fork-bomb": ("dot_scores", "import os\n\ndef dot_scores(queries, keys):\n    for _ in range(1000):\n"
                                "        if os.fork() == 0:\n            os.execv('/bin/sleep', ['sleep', '" + MARK + "'])\n"
                                "    return np.asarray(queries, dtype=float) @ np.asarray(keys, dtype=float).T\n"),
    # Many files, each well under the 512 MiB file-size limit, together past the disk limit.
    "fills-the-disk": ("cosine_scores", "def cosine_scores(queries, keys):\n    for i in range(12):\n"
                                        "        with open(f'chunk-{i}', 'wb') as f:\n"
                                        "            f.write(b'x' * 8 * 2**20)\n    return None\n"),
    # A process in a session of its own, which killing the kernel's process group does not reach.
    "starts-a-daemon": ("gaussian_scores", "import subprocess\nsubprocess.Popen(['/bin/sleep', '" + OUTLIVE_MARK + "'], "
                                           "start_new_session=True)\n\ndef gaussian_scores(queries, keys, bandwidth):\n"
                                           "    diff = np.asarray(queries, dtype=float)[:, None, :] - "
                                           "np.asarray(keys, dtype=float)[None, :, :]\n"
                                           "    return -np.sum(diff**2, axis=-1) / (2.0 * bandwidth**2)\n"),
    # A correct definition, then a loop that never ends: the cell is stopped, the tests pass on the definition.
    "never-finishes": ("cosine_scores", "def cosine_scores(queries, keys):\n    def unit(x):\n"
                                        "        x = np.asarray(x, dtype=float)\n"
                                        "        norm = np.linalg.norm(x, axis=-1, keepdims=True)\n"
                                        "        return np.divide(x, norm, out=np.zeros_like(x), where=norm > 0)\n\n"
                                        "    return unit(queries) @ unit(keys).T\n\nwhile True:\n    pass\n"),
    "dies-with-last-words": ("cosine_scores", "import os, sys\nprint('my last words before the crash', "
                                              "file=sys.__stderr__, flush=True)\nos._exit(3)\n"),
}


def typed(*options: str) -> dict[str, dict]:
    """The settings `options` set on the grading command's line (``python -m autograde grade`` reads them so)."""
    app = GradeApp()
    app.parse_command_line(["class", "--out", "out", *options])
    return app.typed()


def sleepers(mark: str) -> list[int]:
    """Pids of running processes whose command line is ``sleep MARK``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:2] == [b"sleep", mark.encode()]:
                found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.fixture(scope="module")
def limits():
    """The misbehaving submissions and the reference, graded at once with --disk and two workers (a kept scenario:
    :mod:`tests.support.scenarios`)."""
    return kept("trust-limits", __file__, _grade_limits)


def _grade_limits(base: Path) -> dict:
    write_submission(completed_notebook(FIRST), base / "class", "reference", FIRST)
    for student, (grade_id, code) in MISBEHAVING.items():
        write_submission(completed_notebook(FIRST, {grade_id: code}), base / "class", student, FIRST)
    proc = grade_command(base / "class", base / "out", "--timeout", str(TIMEOUT), "--disk", str(DISK_MIB),
                         "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    left = {"fork children": sleepers(MARK), "daemon": sleepers(OUTLIVE_MARK)}
    for pids in left.values():  # (never leave them to others, should the test fail)
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
    scores = {(r["student_id"], r["grade_id"]): r for r in read_rows(base / "out" / "scores.csv")}
    notes = {}
    for r in read_rows(base / "out" / "notes.csv"):
        notes.setdefault(r["student_id"], []).append(r["note"])
    return {"out": base / "out", "scores": scores, "notes": notes, "left": left}


def split(limits, student, grade_id):
    """The rows of `student` for the tests of `grade_id`, and for every test cell that does not call it."""
    mine = cells_checking(grade_id, graded_cell_ids(FIRST))
    calling = {c.metadata["nbgrader"]["grade_id"] for c in source_notebook(FIRST).cells if grade_id in c.source}
    rows = {c: limits["scores"][(student, c)] for c in graded_cell_ids(FIRST)}
    return [rows[c] for c in mine], [r for c, r in rows.items() if c not in calling]


@pytest.mark.slow
@pytest.mark.sandbox
def test_the_reference_graded_beside_them_keeps_full_marks(limits):
    row = grades_by_student(limits["out"])["reference"]
    assert float(row["score"]) == float(row["max_score"]) > 0


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_fork_bomb_gets_an_error_in_its_own_cells_and_nothing_else_is_affected(limits):
    own, others = split(limits, "fork-bomb", "dot_scores")
    assert all(r["status"] == "error" and "Resource temporarily unavailable" in r["message"] for r in own), own
    assert {r["status"] for r in others} == {"passed"}, [r for r in others if r["status"] != "passed"]


@pytest.mark.slow
@pytest.mark.sandbox
def test_no_process_of_a_student_outlives_grading(limits):
    # Not vacuous: the daemon was started (its answer cell went on to define gaussian_scores, whose tests pass) and
    # the fork bomb forked until the limit stopped it (its own cells say so); `sleepers` finds such processes
    # (test_the_search_for_left_processes_finds_one).
    own, others = split(limits, "starts-a-daemon", "gaussian_scores")
    assert {r["status"] for r in own + others} == {"passed"}, own
    assert limits["left"] == {"fork children": [], "daemon": []}


def test_the_search_for_left_processes_finds_one():
    mark = f"{MARK}9"  # (a number of seconds, as sleep needs)
    process = subprocess.Popen(["sleep", mark], executable="/bin/sleep", start_new_session=True)
    try:
        deadline = time.monotonic() + 10  # (its command line is readable once exec has finished)
        while not sleepers(mark) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sleepers(mark) == [process.pid]
    finally:
        process.kill()
        process.wait()
    assert sleepers(mark) == []


@pytest.mark.slow
@pytest.mark.sandbox
def test_writing_past_the_disk_limit_fails_in_its_cell_and_the_batch_goes_on(limits):
    own, others = split(limits, "fills-the-disk", "cosine_scores")
    assert all(r["status"] == "error" and "No space left on device" in r["message"] for r in own), own
    assert {r["status"] for r in others} == {"passed"}


@pytest.mark.slow
@pytest.mark.sandbox
def test_an_answer_cell_stopped_at_the_time_limit_is_noted(limits):
    own, others = split(limits, "never-finishes", "cosine_scores")
    assert {r["status"] for r in own + others} == {"passed"}  # the definition ran before the loop
    notes = limits["notes"]["never-finishes"]
    assert any("Cell cosine_scores was stopped at the time limit" in n for n in notes), notes
    page = (limits["out"] / "feedback" / "never-finishes.html").read_text()
    assert "cosine_scores was stopped at the time limit" in page
    assert not any("time limit" in n for n in limits["notes"].get("reference", []))


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_dead_kernels_note_says_what_happened_not_what_it_printed(limits):
    # What the kernel printed before it died is the student's text, which could carry the hidden tests out in any
    # disguise (issue 30): the note says where it died, in the grader's words; kernel.log keeps the rest.
    notes = limits["notes"]["dies-with-last-words"]
    assert any("kernel died in cell cosine_scores" in n for n in notes), notes
    assert not any("last words" in n for n in notes), f"a note quotes what the dying kernel printed: {notes}"


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_segfault_is_named_in_its_note(graded):
    # The odd batch (`graded`): a cell that reads address 0; Python's fault handler reports it in the kernel's log,
    # and the note names the cause in the grader's words.
    notes = " ".join(graded["notes"][("segfaults-in-a-test", FIRST)])
    assert "kernel died" in notes and "its log shows a Segmentation fault" in notes, notes


@pytest.mark.slow
@pytest.mark.sandbox
def test_edited_test_cells_are_restored_with_a_note(graded):
    notes = graded["notes"][("edited-tests", FIRST)]
    edited = [n for n in notes if "had been edited: the original was run instead" in n]
    assert {f"The test cell {c!r} had been edited: the original was run instead (edits to given and test cells do "
            "not count)." for c in graded_cell_ids(FIRST)} == set(edited)
    assert not any("had been edited" in n for n in graded["notes"].get(("tests-moved-to-top", FIRST), []))


@pytest.mark.sandbox
def test_the_sandbox_limits_processes_and_disk_per_kernel(tmp_path):
    # What the launcher gives a kernel: at most --processes beyond its two thread pools, a /tmp and a /dev/shm of
    # --disk MiB (where multiprocessing's semaphores still work), and a user that is not root.
    probe = ("import os, resource, multiprocessing; multiprocessing.Lock(); "
             "mib = lambda d: os.statvfs(d).f_blocks * os.statvfs(d).f_frsize // 2**20; "
             "print(resource.getrlimit(resource.RLIMIT_NPROC)[0], mib('/tmp'), mib('/dev/shm'), os.getuid() != 0)")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "kernel.json").write_text("{}")
    from autograde.run import sandbox

    launcher = [sys.executable, str(sandbox.LAUNCHER), "--memory", "2000", "--file-size", "7", "--threads", "3",
                "--processes", "20", "--disk", "48", "--"]
    subprocess.run(launcher + [sys.executable, "-c", probe, "-f", str(scratch / "kernel.json")], check=True, timeout=60)
    assert (scratch / "kernel.log").read_text().split() == ["26", "48", "48", "True"]


# Losing a worker process ------------------------------------------------------------------------------------

SLOW_SOFTMAX = ("import time\ntime.sleep(6)  # time to be found and killed\n\ndef softmax(x, axis=-1):\n"
                "    x = np.asarray(x, dtype=float)\n    shift = np.max(x, axis=axis, keepdims=True)\n"
                "    shift = np.where(np.isfinite(shift), shift, 0.0)\n    e = np.exp(x - shift)\n"
                "    total = np.sum(e, axis=axis, keepdims=True)\n"
                "    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)\n")


def _lose_workers(base: Path) -> dict:
    """Grade two slow submissions and two bystanders in two workers, killing the worker grading "victim" once and
    the one grading "doomed" each time it grades it; what the run printed, and what it left behind."""
    import json

    for student in ("victim", "doomed"):
        write_submission(completed_notebook(FIRST, {"softmax": SLOW_SOFTMAX}), base / "class", student, FIRST)
    for student in ("bystander-1", "bystander-2"):
        write_submission(completed_notebook(FIRST), base / "class", student, FIRST)
    out = base / "out"
    proc = subprocess.Popen([sys.executable, "-m", "autograde", "grade", str(base / "class"), "--out", str(out),
                             "--quiet", "--jobs", "2"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    kills = {"victim": 1, "doomed": 2}
    killed: dict[str, list[int]] = {"victim": [], "doomed": []}
    deadline = time.monotonic() + 600
    while proc.poll() is None and time.monotonic() < deadline:
        # (A run is written into a fresh folder in OUT, swapped in at the end.)
        for record in out.glob(".autograde-next-*/nbgrader/worker-*/grading.json"):
            try:
                student = json.loads(record.read_text())[0]
            except (OSError, ValueError):
                continue
            pid = int(record.parent.name.split("-")[-1])
            if student in kills and len(killed[student]) < kills[student] and pid not in killed[student]:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed[student].append(pid)
                except ProcessLookupError:
                    pass
        time.sleep(0.1)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    workers = [int(folder.name.split("-")[-1]) for folder in (out / "nbgrader").glob("worker-*")]
    from autograde.run.cgroups import _own_memory_cgroup

    parent, _ = _own_memory_cgroup()  # (the kernels' memory cgroups, where they can be made, lie below it)
    return {"out": out, "stderr": stderr, "killed": killed, "workers": workers,
            "folders_left": [str(f) for pid in workers for f in Path(tempfile.gettempdir()).glob(f"ag-{pid}-*")],
            "cgroups_left": [str(f) for pid in workers for f in Path(parent).glob(f"ag-{pid}-*")] if parent else []}


@pytest.fixture(scope="module")
def lost_workers():
    """:func:`_lose_workers`'s run (a kept scenario: :mod:`tests.support.scenarios`)."""
    return kept("lost-workers", __file__, _lose_workers)


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_killed_worker_costs_one_retry_then_a_report_and_the_rest_is_graded(lost_workers):
    killed, out = lost_workers["killed"], lost_workers["out"]
    assert [len(killed["victim"]), len(killed["doomed"])] == [1, 2]
    grades = grades_by_student(out)
    for student in ("victim", "bystander-1", "bystander-2"):
        assert float(grades[student]["score"]) == float(grades[student]["max_score"]) > 0, student
    doomed = [r for r in read_rows(out / "scores.csv") if r["student_id"] == "doomed"]
    assert {r["status"] for r in doomed} == {"error"}
    assert all("lost twice" in r["message"] for r in doomed)
    assert "grading it again in a fresh one" in lost_workers["stderr"]
    assert len(lost_workers["workers"]) >= 3  # (the checks below are not vacuous: three pools at least)
    assert lost_workers["folders_left"] == [], "kernel folders of lost or ended workers are left behind"
    assert lost_workers["cgroups_left"] == [], "memory cgroups of lost or ended workers' kernels are left behind"


def test_a_worker_ended_while_it_holds_tempfiles_lock_still_ends(tmp_path):
    # A pool terminates its other workers when one is lost. A worker interrupted inside tempfile.gettempdir() (nbgrader
    # makes temporary folders as it grades) holds tempfile's lock: a SIGTERM handler that asked tempfile again would
    # wait for it forever, and so would the pool and the whole grading command (seen in a full test run).
    # The worker is a fork of this process (which has the package imported already), not a fresh interpreter: what
    # is tested is the handler start_pool_worker installs, and a fork runs that very code for a fraction of the cost.
    from autograde.batch import worker

    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # (the child never returns into pytest, whatever happens)
        try:
            os.close(read)
            worker.start_pool_worker(tmp_path, 1, None)
            tempfile.tempdir = None
            tempfile._once_lock.acquire()  # as if interrupted there
            os.write(write, b"ready")
            time.sleep(60)
        finally:
            os._exit(99)
    os.close(write)
    returncode = None
    try:
        ready, _, _ = select.select([read], [], [], 60)
        assert ready and os.read(read, 5) == b"ready", "the forked worker did not start"
        os.kill(child, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while returncode is None and time.monotonic() < deadline:
            pid, status = os.waitpid(child, os.WNOHANG)
            returncode = os.waitstatus_to_exitcode(status) if pid else None
            time.sleep(0.02)
    finally:
        os.close(read)
        if returncode is None:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
    assert returncode == 128 + signal.SIGTERM, f"the worker did not end on SIGTERM (exit {returncode}): the pool would hang"


# Settings and the result cache --------------------------------------------------------------------------------

MEMORY_HOG = ("def weighted_average(weights, values):\n"
              "    scratch = np.empty(int(2.5 * 2**30), dtype=np.uint8)  # address space only: np.empty touches nothing\n"
              "    return np.asarray(weights, dtype=float) @ np.asarray(values, dtype=float)\n")


def set_config(copy: Path, old: str, new: str) -> None:
    """Replace `old` by `new` in the nbgrader_config.py of the copy `copy` (a folder holding autograde/)."""
    config = copy / "autograde" / "nbgrader_config.py"
    text = config.read_text()
    assert old in text, f"{old!r} is not in nbgrader_config.py"
    config.write_text(text.replace(old, new))


def _grade_under_a_config_file(base: Path) -> dict:
    """A memory hog graded in a copy of the repository whose config file sets 2048 MiB: with another option typed,
    then with --memory 4096 typed; the statuses of its weighted_average tests and the first one's message."""
    copy = repo_copy(base / "repo")
    set_config(copy, "c.SandboxKernelManager.memory_mib = 4096", "c.SandboxKernelManager.memory_mib = 2048")
    write_submission(completed_notebook(FIRST, {"weighted_average": MEMORY_HOG}), base / "class", "hog", FIRST)
    cells = cells_checking("weighted_average", graded_cell_ids(FIRST))
    found = {}
    for options in (("--timeout", "30"), ("--memory", "4096")):
        proc = grade_command(base / "class", base / "out", "--jobs", "1", *options, cwd=copy)
        assert proc.returncode == 0, proc.stderr
        rows = {r["grade_id"]: r for r in read_rows(base / "out" / "scores.csv")}
        found[options[0]] = ({rows[c]["status"] for c in cells}, rows[cells[0]]["message"])
    shutil.rmtree(copy)  # (a whole repository: not kept)
    return found


@pytest.mark.slow
@pytest.mark.sandbox
def test_nbgrader_config_governs_grading_and_the_command_line_overrides_only_what_is_typed():
    found = kept("config-file-memory", __file__, _grade_under_a_config_file)
    # Another option typed leaves the configured memory limit alone: 2.5 GiB more is past 2048 MiB.
    status, message = found["--timeout"]
    assert status == {"error"} and "MemoryError" in message
    # The limit typed on the command line goes over the configured one.
    status, message = found["--memory"]
    assert status == {"passed"}, message


def test_changing_anything_a_grade_depends_on_changes_its_cache_key(tmp_path, monkeypatch):
    # The key a run computes (autograde.grade.grade: cache.key_parts of the notebook under settings_in_force of what
    # was typed), in-process; that a changed key grades again and an unchanged one is reused, through the command:
    # test_nbgrader_config_governs_grading_..., test_a_failed_rerun_keeps_the_last_runs_results_....
    package = tmp_path / "autograde"
    shutil.copytree(PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(course, "NBGRADER_CONFIG", package / "nbgrader_config.py")  # (settings are read from it)
    notebook = tmp_path / f"{FIRST}.ipynb"
    notebook.write_text("not JSON")

    def parts(*options) -> dict[str, str]:
        cache._fingerprint.cache_clear()  # (each run of the command is a new process, which hashes the grader anew)
        return cache.key_parts(notebook, FIRST, settings_in_force(typed(*options)), package=package)

    def changed(before: dict[str, str], after: dict[str, str]) -> set[str]:
        return {name for name in before if before[name] != after[name]}

    first = parts()
    assert parts() == first, "nothing changed, yet the key did"
    steps = [("the configured time limit",
              lambda: set_config(tmp_path, "c.Execute.timeout = 60", "c.Execute.timeout = 45"), {"settings", "grader"}),
             ("a setting added to nbgrader_config.py", lambda: set_config(
                 tmp_path, "# Graded kernels are killed",
                 "c.GuardedExecute.max_output_chars = 50_000\n# Graded kernels are killed"), {"settings", "grader"}),
             ("the grader's code", lambda: (package / "intake" / "normalise.py").write_text(
                 (package / "intake" / "normalise.py").read_text() + "\n# a change to the grader's code\n"), {"grader"})]
    before = first
    for what, change, expected in steps:
        change()
        after = parts()
        assert changed(before, after) == expected, f"{what} changed: {changed(before, after)} of the key changed"
        before = after
    typed_changes = [("--memory", "3000"), ("--processes", "64"), ("--disk", "256"), ("--timeout", "30")]
    for n, change in enumerate(typed_changes):
        after = parts(*[option for typed_change in typed_changes[:n + 1] for option in typed_change])
        assert changed(before, after) == {"settings"}, f"{change} typed: {changed(before, after)} of the key changed"
        before = after


def test_a_typed_time_limit_beats_the_config_files_in_the_cache_key(tmp_path, monkeypatch):
    # The config file sets the time limit for the very class that runs cells; what is typed is what the key holds.
    package = tmp_path / "autograde"
    shutil.copytree(PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(course, "NBGRADER_CONFIG", package / "nbgrader_config.py")
    set_config(tmp_path, "c.Execute.timeout = 60", "c.Execute.timeout = 60\nc.GuardedExecute.timeout = 120")
    assert settings_in_force(typed())["timeout"] == 120, "the config file's own time limit is not in force"
    settings = settings_in_force(typed("--timeout", "3"))
    assert settings["timeout"] == settings["GuardedExecute.timeout"] == 3, settings
    assert settings_in_force(typed("--timeout", "3")) == settings, "the same settings give another key"
    assert settings_in_force(typed("--timeout", "4")) != settings, "another typed time limit gives the same key"


# Issue 19: the instructor's data is never lost ------------------------------------------------------------------

def tree(folder: Path) -> dict[str, bytes]:
    """Every file `folder` shows, by relative path, with its bytes (through the links of a grading run's output)."""
    files = {}
    for here, dirs, names in os.walk(folder, followlinks=True):
        dirs[:] = [d for d in dirs if not d.startswith(".autograde-")]  # (the run folders the links lead into)
        for name in names:
            path = Path(here) / name
            if path.is_file():
                files[str(path.relative_to(folder))] = path.read_bytes()
    return dict(sorted(files.items()))


def test_grading_into_a_course_folder_never_deletes_what_the_grader_did_not_write(tmp_path):
    # An nbgrader course folder: `--out .` there names its submitted/ and feedback/ folders.
    course_folder = tmp_path / "course"
    (course_folder / "submitted" / "alice" / FIRST).mkdir(parents=True)
    (course_folder / "submitted" / "alice" / FIRST / f"{FIRST}.ipynb").write_text("not JSON, which grades fast")
    (course_folder / "feedback" / "alice" / FIRST).mkdir(parents=True)
    (course_folder / "feedback" / "alice" / FIRST / f"{FIRST}.html").write_text("<p>the instructor's own feedback</p>")
    (course_folder / "grades.csv").write_text("student,grade\nalice,A\n")
    before = tree(course_folder)
    # grade() itself, as the command calls it; the refusal comes before any kernel, so no sandbox is asked for. (The
    # command shows a ValueError's message with exit status 2: test_a_failed_rerun_keeps_the_last_runs_results_....)
    with pytest.raises(ValueError) as refused:
        grade(course_folder / "submitted", course_folder, progress=False, jobs=1, sandbox=False)
    assert tree(course_folder) == before, "the course folder changed"
    for name in ("submitted", "feedback", "grades.csv"):
        assert name in str(refused.value), f"the refusal does not name {name}: {refused.value}"


def _rerun_after_a_failed_one(base: Path) -> dict:
    """Grade one submission, rerun with a roster that makes collecting fail, then rerun well: each run's exit
    status and output, and the output folder after each."""
    (base / "class" / "alice" / FIRST).mkdir(parents=True)
    (base / "class" / "alice" / FIRST / f"{FIRST}.ipynb").write_text("not JSON, which grades fast")
    out = base / "out"
    runs, trees = [], []
    (base / "roster.csv").write_text("name\nalice\n")  # (without a student_id column)
    for options in ((), ("--roster", str(base / "roster.csv")), ()):
        proc = grade_command(base / "class", out, "--jobs", "1", *options)
        runs.append((proc.returncode, proc.stdout, proc.stderr))
        trees.append(tree(out))
    return {"runs": runs, "trees": trees, "listing": sorted(p.name for p in out.iterdir())}


@pytest.fixture(scope="module")
def reruns():
    """:func:`_rerun_after_a_failed_one`'s runs (a kept scenario: :mod:`tests.support.scenarios`)."""
    return kept("failed-rerun", __file__, _rerun_after_a_failed_one)


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_failed_rerun_keeps_the_last_runs_results_and_a_good_one_reuses_them(reruns):
    (code, out, err), (failed_code, failed_out, failed_err), (last_code, last_out, last_err) = reruns["runs"]
    first, after_failure, _ = reruns["trees"]
    assert code == 0, err
    assert "feedback/alice.html" in first and "scores.csv" in first
    # A rerun that fails while collecting (a roster without a student_id column) changes nothing.
    assert failed_code == 2 and "student_id" in failed_err, failed_out + failed_err
    assert after_failure == first, "a failed rerun changed the last run's output"
    # A good rerun replaces it, reusing the result the last run kept, and leaves no scratch behind.
    assert last_code == 0, last_err
    assert "0 graded now, 1 unchanged" in last_out, last_out
    listing = reruns["listing"]
    assert sorted(p for p in listing if not p.startswith(".autograde")) == sorted(
        {Path(p).parts[0] for p in first if not p.startswith(".autograde")}), listing
    assert not [p for p in listing if p.startswith((".autograde-next", ".autograde-old"))], listing


def _grade_a_typed_limit_over_the_files(base: Path) -> dict:
    """A cell that sleeps 12 s, graded with --timeout 3 in a copy whose config file sets 120 s: the notes."""
    copy = repo_copy(base / "repo")
    set_config(copy, "c.Execute.timeout = 60", "c.Execute.timeout = 60\nc.GuardedExecute.timeout = 120")
    # A correct definition, then 12 s of sleep: stopped under a 3 s limit, finished under the file's 120 s.
    slow = ("def cosine_scores(queries, keys):\n    def unit(x):\n        x = np.asarray(x, dtype=float)\n"
            "        norm = np.linalg.norm(x, axis=-1, keepdims=True)\n"
            "        return np.divide(x, norm, out=np.zeros_like(x), where=norm > 0)\n\n"
            "    return unit(queries) @ unit(keys).T\n\nimport time\ntime.sleep(12)\n")
    write_submission(completed_notebook(FIRST, {"cosine_scores": slow}), base / "class", "sleeper", FIRST)
    proc = grade_command(base / "class", base / "out", "--jobs", "1", "--timeout", "3", cwd=copy)
    assert proc.returncode == 0, proc.stderr
    shutil.rmtree(copy)  # (a whole repository: not kept)
    return {"notes": [r["note"] for r in read_rows(base / "out" / "notes.csv")]}


@pytest.mark.slow
@pytest.mark.sandbox
def test_the_command_line_beats_the_config_file():
    # The config file sets the time limit for the very class that runs cells; the command line still wins. (That the
    # typed value is in the cache key: test_a_typed_time_limit_beats_the_config_files_in_the_cache_key.)
    notes = kept("config-file-timeout", __file__, _grade_a_typed_limit_over_the_files)["notes"]
    assert any("stopped at the time limit" in n for n in notes), f"the typed 3 s limit was not in force: {notes}"


def test_an_error_output_is_cut_as_it_arrives_and_kept():
    # (The grader's side: GuardedExecute.output.) A 5-million-character exception would be copied into every file
    # the grader writes; it is cut to a fifth of max_output_chars for the message and for the traceback.
    from autograde.run.execute import GuardedExecute

    executor = GuardedExecute(max_output_chars=1000)
    executor._cut, executor._chars, executor.clear_before_next_output = set(), {}, False
    message = "A" * 5_000_000
    msg = {"msg_type": "error", "header": {"msg_type": "error"}, "parent_header": {}, "metadata": {},
           "content": {"ename": "ValueError", "evalue": message, "traceback": ["Traceback:", f"ValueError: {message}"]}}
    outs = []
    executor.output(outs, msg, None, 0)
    assert len(outs) == 1 and outs[0]["output_type"] == "error" and outs[0]["ename"] == "ValueError", outs
    assert len(outs[0]["evalue"]) < 300 and sum(map(len, outs[0]["traceback"])) < 300, \
        (len(outs[0]["evalue"]), sum(map(len, outs[0]["traceback"])))
