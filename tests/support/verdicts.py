"""A mutant's verdicts decided in-process: which test cells of the notebook pass, without grading it whole.

Test scaffolding, not part of the grader. The grader (``python -m autograde
grade``) starts a sandboxed kernel per notebook (about 5 s each); here one
child process per assignment runs the SOURCE notebook (hidden tests included,
as the grader runs them) with the reference solutions in an IPython
``InteractiveShell`` (the kernel's own semantics: magics, display hook, history),
and forks just before each solution cell some variant replaces: the fork runs
the variant's code and the cells after it that it can change (with those they
need: tests/support/slicing.py), the parent the reference cell, so the common
prefix runs once and a cell no variant can change (a training run a wrong
``apply_rope`` never reaches) runs once too.

It keeps what decides a cell's points in the grader:

- a test cell fails when it raises (nbgrader's verdict); output to stderr does
  NOT fail it, as the grader's ``StderrIsNotFailure`` relabels it, and a test
  cell's ``execute_result`` decides nothing (``no_verdict``);
- a cell past the time limit is interrupted (``KeyboardInterrupt``, as the
  kernel gets) and recorded as timed out; the cells after it still run;
- the message is the grader's own (``autograde.results.classify.classify_cell`` on the
  same record, as in scores.csv);
- NumPy and PyTorch use one thread, Matplotlib the ``agg`` backend, as in the
  grader's kernels.

Hypothesis does not shrink a failing example here, except for the variants
named `exact` (those whose messages are compared with the grader's, word for
word): whether a cell fails is decided before shrinking (the tests draw their
examples derandomized), only the example its message shows can differ, and
shrinking the examples of every wrong answer cost a third of some chapters'
evaluation (chapters 6 and 7: 93 s against 73 s, two forks at a time).

What it does not reproduce: the checker (the test cells run here beside the
answers, in one process, as plain nbgrader runs them: a mutant is a plausible
mistake, not an attack), a kernel that dies (the grader runs the notebook
again without that cell; here the variant's evaluation fails with an error),
the sandbox's limits (memory, files, network) and the whole notebook's time
limit. Mutants and alternatives need none of them;
``test_in_process_verdicts_agree_with_the_grader`` checks the two ways agree.

``python -m tests.support.verdicts measure [ASSIGNMENT ...] [--every-cell]`` times the
evaluation of every mutant of each chapter (best of 3); ``compare [ASSIGNMENT ...]``
checks that sliced forks decide every mutant's and alternative's verdicts as forks
that run every cell do.
"""
from __future__ import annotations

import argparse
import fcntl
import functools
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Collection
from pathlib import Path

# Only the standard library at import: the child process (``python -m tests.support.verdicts run``) starts with
# what a kernel starts with, and the pytest side imports the grader's modules where it uses them.
REPO = Path(__file__).resolve().parent.parent.parent
MUTANTS = REPO / "tests" / "mutants"
CACHE = REPO / ".grading-cache" / "verdicts"  # (beside the graded batches: `make clean` removes both)

__all__ = ["SAMPLED_MUTANTS", "chapter_verdicts", "mutant_verdicts", "notebook_verdicts"]

# Seconds per cell. More than the grader's batch gets (tests/conftest.py: 20 s): a cell here only has to finish, and
# a finite one must not fail because the machine is busy. Chapter 2's training takes ~10 s alone; a test that trains
# again with the tests' own module takes as long, and on a loaded machine (three processes on two shared cores) that
# went past 20 s. No mutant or alternative loses a point by a timeout on an idle machine.
CELL_TIMEOUT = 60
WALL_FACTOR = 10  # a cell is stopped after this many times its limit by the wall clock (GuardedExecute's default)
JOBS = 2  # forked evaluations running at once (the machine has 2 cores)

# One mutant per chapter whose verdicts are also decided by the real grader (the lead's `grade_chapter` batch), to
# check that both ways agree: each fails cells in a way that exercises more than one assertion.
SAMPLED_MUTANTS: tuple[tuple[str, str, Path], ...] = tuple((a, g, MUTANTS / a / g / f"{name}.py") for a, g, name in (
    # Undone: raises NotImplementedError in four cells, and the temperature and bandwidth measurements (which
    # call softmax) are run again with the tests' own softmax (retry_with_reference) and keep their points.
    ("01-weighted-sum", "softmax", "not_done"),
    # A wrong mask in the module the decoder is trained with: the training cells run on the tests' own module.
    ("02-additive-attention", "AdditiveAttention", "flipped_mask"),
    # A check that raises on buggy attention instead of returning False: an error in the student's own code.
    ("03-self-attention", "check_attention", "crashes_on_bugs"),
    # A cache that stores state wrongly: several hidden cells, incremental attention built on it.
    ("04-long-sequences", "KVCache", "overwrites"),
    # Trained and untrained checks of TinyGPT: the visible and the causal cell, with training in the notebook.
    ("05-transformer", "TinyGPT", "mask_hides_current"),
    # A class token without its position: the visible, hand-written and attention cells fail; training keeps its points.
    ("06-beyond-text", "ViT", "class_token_without_position"),
    # L saved before the last block's update: the forward is right; the gradient, causal and no-key L cells fail (the
    # saved-tensor check and the measured ratio keep their points).
    ("07-backward-pass", "FlashAttention", "L_before_final_rescale"),
    # Query head h reading kv head h % n_kv_heads: the visible worked example and the groups fail, MHA and the cache
    # (consistent with itself) keep their points.
    ("08-cheaper-attention", "GroupedQueryAttention", "kv_head_modulo"),
))

_RUNNER = "tests.support.verdicts"


# ---------------------------------------------------------------------------------------------------------------
# The pytest side: build the request, start one child process, read back and format the verdicts.


def _cells(nb) -> list[dict]:
    """The notebook's cells as the runner needs them: type, source, nbgrader metadata."""
    return [{"cell_type": c.cell_type, "source": c.source, "nbgrader": dict(c.metadata.get("nbgrader", {}))}
            for c in nb.cells]


def notebook_verdicts(cells: list[dict], variants: dict[str, dict[str, str]], timeout: float = CELL_TIMEOUT,
                      jobs: int = JOBS, assignment: str = "", sliced: bool = True, exact: Collection[str] = ()
                      ) -> dict[str, dict[str, tuple[bool, str]]]:
    """Verdicts of the test cells of a notebook given as `cells` (``{"cell_type", "source", "nbgrader"}`` each).

    `variants` maps a name to ``{solution_grade_id: code}`` (the complete code of
    each cell it replaces; ``{}`` is the notebook as given). Solution cells
    run as given (their ``### BEGIN/END SOLUTION`` markers removed). Returns
    ``{name: {test_grade_id: (passed, message)}}``; with `assignment`, each message is written as a row of
    scores.csv writes it. With `sliced`, a variant's fork runs only the cells it can change and those they need
    (:func:`tests.support.slicing.cells_to_run`); the others keep the reference's record. Only the variants named
    in `exact` shrink a failing Hypothesis example, as the grader does (see the module's docstring).
    """
    solution_ids = {c["nbgrader"].get("grade_id") for c in cells if c["nbgrader"].get("solution")}
    for name, cells_replaced in variants.items():
        unknown = set(cells_replaced) - solution_ids
        if unknown:
            raise KeyError(f"variant {name!r} replaces no solution cell: {sorted(unknown)}")
    from autograde.reference import solution_code

    # What runs in a solution cell that no variant replaces: the reference, as a perfect student writes it.
    cells = [{**c, "source": solution_code(c["source"])} if c["nbgrader"].get("solution") else c for c in cells]
    request = {"cells": cells, "variants": variants, "timeout": timeout, "jobs": jobs, "sliced": sliced,
               "exact": sorted(exact)}
    with tempfile.TemporaryDirectory(prefix="verdicts-") as scratch:
        scratch = Path(scratch)
        (scratch / "request.json").write_text(json.dumps(request))
        env = {**os.environ, "MPLBACKEND": "agg", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "IPYTHONDIR": str(scratch / "ipython"), "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
        with open(scratch / "log.txt", "wb") as log:
            # The notebook's own output goes to the log; a whole evaluation is bounded even if a cell ignores the alarm.
            proc = subprocess.run([sys.executable, "-m", _RUNNER, "run", str(scratch / "request.json"),
                                   str(scratch / "result.json")], cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                                  stdout=log, stderr=subprocess.STDOUT, timeout=3600)
        result = scratch / "result.json"
        if proc.returncode != 0 or not result.is_file():
            tail = (scratch / "log.txt").read_bytes()[-4000:].decode(errors="replace")
            raise RuntimeError(f"the in-process evaluation failed (exit {proc.returncode}):\n{tail}")
        raw = json.loads(result.read_text())
    tests = [c["nbgrader"]["grade_id"] for c in cells if _is_test(c)]
    return {name: _format(raw[name], tests, assignment) for name in variants}


def _format(outcome: dict, tests: list[str], assignment: str) -> dict[str, tuple[bool, str]]:
    """(passed, message) per test cell from the runner's record, classified by the grader's own code."""
    from nbformat import NotebookNode

    from autograde.intake.lms import spreadsheet_cell
    from autograde.results.classify import CellResult, classify_cell
    from autograde.run.records import EVENTS_KEY, error_output

    timed_out = any("timed_out" in c["events"] for c in outcome.values())
    verdicts = {}
    for grade_id in tests:
        record = outcome[grade_id]
        cell = NotebookNode(cell_type="code", metadata=NotebookNode({EVENTS_KEY: record["events"]}),
                            outputs=[error_output(*record["error"])] if record["error"] else [])
        failure = classify_cell(cell, timed_out)
        if failure is None:
            verdicts[grade_id] = (True, "")
        else:
            status, message = failure
            if assignment:  # written as scores.csv writes it
                message = CellResult("", assignment, grade_id, 0.0, 1.0, status, message).message
            verdicts[grade_id] = (False, spreadsheet_cell(message))
    return verdicts


def mutant_verdicts(assignment: str, variants: dict[str, dict[str, str]], timeout: float = CELL_TIMEOUT,
                    jobs: int = JOBS, cache: Path | None = None, sliced: bool = True, exact: Collection[str] = ()
                    ) -> dict[str, dict[str, tuple[bool, str]]]:
    """``{name: {test_grade_id: (passed, message)}}`` for each variant of `assignment`'s notebook.

    `variants` maps a name to ``{solution_grade_id: mutant_source}``: the file's
    text of a mutant or alternative (whole code, or a ``# replace:``/``# with:``
    patch, resolved with :func:`tests.support.synthetic.mutant_code`); ``{}`` is
    the reference. Every other solution cell holds the reference solution, and
    the test cells are the source notebook's (hidden tests included). A test
    cell passes exactly when the grader would give it full points, and the
    message of a failed one is the grader's (as in scores.csv). With `cache`, a
    folder, the verdicts are kept there under :func:`verdicts_key` and reused. `sliced`: as
    :func:`notebook_verdicts`.
    """
    from autograde.course import source_notebook
    from autograde.reference import solution_code
    from tests.support.synthetic import mutant_code

    nb = source_notebook(assignment)
    reference = {c.metadata["nbgrader"]["grade_id"]: solution_code(c.source) for c in nb.cells
                 if c.metadata.get("nbgrader", {}).get("solution")}
    resolved = {}
    for name, cells_replaced in variants.items():
        unknown = set(cells_replaced) - set(reference)
        if unknown:
            raise KeyError(f"{assignment} has no solution cell with grade id {sorted(unknown)} (variant {name!r})")
        resolved[name] = {g: mutant_code(text, reference[g]) for g, text in cells_replaced.items()}
    cells = _cells(nb)
    if cache is None:
        return notebook_verdicts(cells, resolved, timeout, jobs, assignment, sliced, exact)
    # Kept between test runs, as the grader keeps a grade: a rerun after a change to anything else decides nothing.
    key = verdicts_key(cells, resolved, timeout, sliced, exact)
    path = Path(cache) / f"{assignment}-{key[:16]}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    # One process decides them; another of the same test run (pytest-xdist's workers) or of another run waits.
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            saved = json.loads(path.read_text())
            if saved["key"] == key:
                return {name: {c: (bool(p), str(m)) for c, (p, m) in cells_.items()}
                        for name, cells_ in saved["verdicts"].items()}
        except (OSError, ValueError, KeyError, TypeError):
            pass
        verdicts = notebook_verdicts(cells, resolved, timeout, jobs, assignment, sliced, exact)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps({"key": key, "verdicts": verdicts}))
        os.replace(partial, path)  # (whole or not at all)
        return verdicts


def verdicts_key(cells: list[dict], variants: dict[str, dict[str, str]], timeout: float, sliced: bool = True,
                 exact: Collection[str] = ()) -> str:
    """A hash of everything the verdicts of `variants` on `cells` depend on: the cells (solutions and tests), each
    variant's code, the time limit, whether forks are sliced, this evaluator's code (and the slicing's) and the
    grader's (its classification, with
    the version of every installed package: :func:`autograde.results.cache.grader_fingerprint`)."""
    from autograde.results.cache import grader_fingerprint

    h = hashlib.sha256(json.dumps({"cells": cells, "variants": variants, "timeout": timeout, "sliced": sliced,
                                   "exact": sorted(exact)},
                                  sort_keys=True).encode())
    h.update(Path(__file__).read_bytes())
    h.update((Path(__file__).parent / "slicing.py").read_bytes())
    h.update(grader_fingerprint().encode())
    return h.hexdigest()


@functools.cache
def chapter_verdicts(assignment: str, alternatives: bool = False) -> dict[str, dict[str, tuple[bool, str]]]:
    """In-process verdicts of every mutant of `assignment`, of the reference and of the notebook as released (every
    answer cell as the student gets it); with `alternatives`, of the reference and every correct alternative
    instead, each alone and in the notebooks the chapter's batch grades them in
    (:func:`tests.support.submissions.alternative_groups`). Each computed once per process, and apart: the mutants' tests need no alternative (a chapter whose
    training every fork runs again pays for each).

    Keyed by the student ids the grader's batch gives them (:func:`mutant_student`,
    :func:`alternative_student`, ``"alternatives-<k>"``, ``"reference"``, ``"untouched"``), so they
    compare directly with a graded batch's scores.
    """
    from tests.support.synthetic import mutant_student

    # The students whose messages test_verdicts.py compares with the grader's: their failing examples shrink.
    exact = {"reference", "untouched"} | {mutant_student(g, p) for a, g, p in SAMPLED_MUTANTS if a == assignment}
    return mutant_verdicts(assignment, chapter_variants(assignment, alternatives), cache=CACHE, exact=exact)


def chapter_variants(assignment: str, alternatives: bool = False) -> dict[str, dict[str, str]]:
    """The variants :func:`chapter_verdicts` evaluates, ``{student: {solution_grade_id: file text}}``."""
    from tests.support import submissions
    from tests.support.synthetic import alternative_student, mutant_student, student_notebook

    if alternatives:
        variants: dict[str, dict[str, str]] = {"reference": {}}
        student, files = alternative_student, submissions.alternatives()
        for group, cells in submissions.alternative_groups(assignment).items():  # (as the batch grades them)
            variants[group] = {grade_id: path.read_text() for grade_id, path in cells.items()}
    else:
        released = {c.metadata["nbgrader"]["grade_id"]: c.source for c in student_notebook(assignment).cells
                    if c.metadata.get("nbgrader", {}).get("solution")}
        variants = {"reference": {}, "untouched": released}
        student, files = mutant_student, submissions.mutants()
    for a, grade_id, path in files:
        if a == assignment:
            variants[student(grade_id, path)] = {grade_id: path.read_text()}
    return variants


# ---------------------------------------------------------------------------------------------------------------
# The child process: one InteractiveShell, the reference run in the parent, a fork per variant.


def _is_test(cell: dict) -> bool:
    """An autograded test cell: graded, not an answer (as autograde.run.execute decides)."""
    return cell["cell_type"] == "code" and bool(cell["nbgrader"].get("grade") and not cell["nbgrader"].get("solution"))


class _OutStream(io.TextIOWrapper):
    """sys.stdout and sys.stderr of the evaluation, written through a Python method as ipykernel's OutStream is.

    IPython records a cell's output by setting ``write`` on the stream during
    the cell and setting the class's method back after it.
    """

    def write(self, text):
        return super().write(text)


class _Notebook:
    """Runs cells in one InteractiveShell as a kernel runs them."""

    def __init__(self, cells: list[dict], timeout: float):
        from IPython.core.interactiveshell import InteractiveShell
        from traitlets.config import Config

        for name, fd in (("stdout", 1), ("stderr", 2)):
            setattr(sys, name, _OutStream(os.fdopen(fd, "wb", closefd=False), encoding="utf-8",
                                          errors="backslashreplace", line_buffering=True))
        config = Config()
        config.HistoryManager.hist_file = ":memory:"  # no history database, no saving thread (forks inherit it)
        self.shell = InteractiveShell.instance(config=config)
        self.cells, self.timeout = cells, timeout
        self.rang, self.clock = False, None
        signal.signal(signal.SIGALRM, self._interrupt)

    def _interrupt(self, signum, frame):
        if self.clock is None:  # (the cell has ended: an alarm that was pending as it was disarmed)
            return
        if not self.clock.expired():
            # Time spent waiting for a CPU is not charged, as the grader's CellClock does not charge it: a busy machine
            # does not time a cell out here either.
            signal.setitimer(signal.ITIMER_REAL, self.clock.next_check())
            return
        self.rang = True  # a timeout is what the alarm saw, never an exception's name (student code can raise it)
        raise KeyboardInterrupt  # what the kernel gets when nbclient interrupts a cell at the time limit

    def run(self, index: int, source: str) -> dict:
        """Run cell `index` with `source`; its record: ``{"error": [ename, evalue] | None, "events": {...},
        "seconds": wall time}``."""
        events: dict = {}
        start, self.rang = time.monotonic(), False
        from autograde.run.clock import CellClock, run_queue_wait

        self.clock = CellClock(self.timeout, start + WALL_FACTOR * self.timeout, lambda: run_queue_wait(os.getpid()))
        signal.setitimer(signal.ITIMER_REAL, self.timeout)
        try:
            result = self.shell.run_cell(source, store_history=True)
        except KeyboardInterrupt:  # the alarm rang outside the cell's own code (in IPython's machinery)
            result = None
        finally:
            self.clock = None  # (first: a pending alarm then finds no cell to time)
            signal.setitimer(signal.ITIMER_REAL, 0)
        error = None if result is None else result.error_before_exec or result.error_in_exec
        if self.rang:
            events["timed_out"] = {}
            error = error or KeyboardInterrupt()
        return {"error": [type(error).__name__, str(error)] if error is not None else None, "events": events,
                "seconds": round(time.monotonic() - start, 3)}


def _no_shrinking() -> None:
    """From now on in this process, a Hypothesis test that fails reports the first failing example it drew, unshrunk
    (what the settings a test cell passes do not name comes from the loaded profile)."""
    from hypothesis import Phase, settings

    settings.register_profile("verdicts-unshrunk", phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target])
    settings.load_profile("verdicts-unshrunk")


def _run(request: dict, result_path: Path) -> None:
    """Evaluate the reference and every variant of the request; write ``{name: {grade_id: record}}`` (every code
    cell's record) to `result_path`."""
    # NumPy and PyTorch use one thread, as in the grader's kernels: notebook_verdicts sets OMP_NUM_THREADS=1 (and
    # OpenBLAS's, MKL's), which PyTorch reads when the notebook imports it (torch.get_num_threads() is 1).
    from tests.support.slicing import cells_to_run

    cells, variants, jobs = request["cells"], request["variants"], max(int(request["jobs"]), 1)
    exact = set(request.get("exact", ()))
    uses_hypothesis = any("hypothesis" in c["source"] for c in cells)
    # The scratch folder of the request (notebook_verdicts removes it): a notebook's files land there, as in a
    # kernel's own folder, and each fork leaves its records there.
    scratch = result_path.parent
    (scratch / "cwd").mkdir()
    os.chdir(scratch / "cwd")
    notebook = _Notebook(cells, float(request["timeout"]))
    index_of = {c["nbgrader"].get("grade_id"): i for i, c in enumerate(cells) if c["nbgrader"].get("solution")}
    starts: dict[int, list[str]] = {}
    for name, replaced in variants.items():
        if replaced:
            starts.setdefault(min(index_of[g] for g in replaced), []).append(name)
    outputs = scratch / "forks"
    outputs.mkdir()
    running: dict[int, tuple[str, float]] = {}  # pid -> (variant, deadline)
    failed: dict[str, str] = {}
    reference: dict[int, dict] = {}

    def reap(limit: int) -> None:
        """Wait until fewer than `limit` forked evaluations run; kill any past its deadline (stuck in C code)."""
        while len(running) >= limit:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                now = time.monotonic()
                for late, (_, deadline) in running.items():
                    if now > deadline:
                        os.kill(late, signal.SIGKILL)
                time.sleep(0.01)
                continue
            name, _ = running.pop(pid)
            code = os.waitstatus_to_exitcode(status)
            if code != 0 or not (outputs / f"{pid}.json").is_file():
                failed[name] = f"exit status {code}"

    def source(index: int, replaced: dict[str, str]) -> str:
        cell = cells[index]
        grade_id = cell["nbgrader"].get("grade_id")
        if cell["nbgrader"].get("solution"):
            return replaced.get(grade_id, cell["source"])
        return cell["source"]

    # The cells each variant's fork runs (None: every one from its first replaced cell).
    plans: dict[str, set[int] | None] = {}
    as_reference = [source(i, {}) if c["cell_type"] == "code" else None for i, c in enumerate(cells)]
    for name, replaced in variants.items():
        if replaced:
            code = [source(i, replaced) if c["cell_type"] == "code" else None for i, c in enumerate(cells)]
            plans[name] = (cells_to_run(code, {index_of[g] for g in replaced}, as_reference)
                           if request.get("sliced") else None)

    pids: dict[int, str] = {}
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        for name in starts.get(index, []):
            reap(limit=jobs)
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:  # the variant: its cell and every cell after it
                code = 0
                try:
                    if uses_hypothesis and name not in exact:
                        _no_shrinking()
                    plan = plans[name]
                    records = {i: notebook.run(i, source(i, variants[name])) for i in range(index, len(cells))
                               if cells[i]["cell_type"] == "code" and (plan is None or i in plan)}
                    (outputs / f"{os.getpid()}.json").write_text(json.dumps(records))
                except BaseException:  # noqa: BLE001 (anything: the parent reports the variant as failed)
                    import traceback

                    traceback.print_exc()
                    code = 1
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(code)
            remaining = sum(1 for i, c in enumerate(cells[index:], index) if c["cell_type"] == "code"
                            and (plans[name] is None or i in plans[name]))
            # (A busy machine may stretch each cell to its wall-clock cap: only past that is a fork stuck.)
            running[pid] = (name, time.monotonic() + WALL_FACTOR * notebook.timeout * remaining + 60)
            pids[pid] = name
        reference[index] = notebook.run(index, source(index, {}))
    reap(limit=1)
    if failed:
        raise RuntimeError(f"variants whose evaluation process died or hung: {failed}")
    by_name = {name: {int(i): r for i, r in json.loads((outputs / f"{pid}.json").read_text()).items()}
               for pid, name in pids.items()}
    results = {}
    for name in variants:
        records = {**reference, **by_name.get(name, {})}
        results[name] = {cells[i]["nbgrader"].get("grade_id") or f"cell-{i}": r for i, r in sorted(records.items())}
    result_path.write_text(json.dumps(results))


def _measure(assignments: list[str], repeat: int, sliced: bool) -> None:
    """Print the best of `repeat` wall times to evaluate every mutant of each of `assignments` in-process."""
    for assignment in assignments:
        variants = {n: v for n, v in chapter_variants(assignment).items() if n.startswith("mutant")}
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            mutant_verdicts(assignment, variants, sliced=sliced)
            times.append(time.perf_counter() - start)
        print(f"{assignment}: {len(variants)} mutants in {min(times):.1f} s (best of {repeat}: "
              f"{', '.join(f'{t:.1f}' for t in times)}; {'sliced' if sliced else 'every cell'})", flush=True)


def _compare(assignments: list[str]) -> int:
    """Decide every mutant's and alternative's verdicts of each of `assignments` with sliced forks and with forks
    that run every cell; print each difference; the number of differences."""
    differences = 0
    for assignment in assignments:
        for alternatives in (False, True):
            variants = chapter_variants(assignment, alternatives)
            sliced, whole = (mutant_verdicts(assignment, variants, sliced=s) for s in (True, False))
            for name in variants:
                for cell in whole[name]:
                    if sliced[name][cell] != whole[name][cell]:
                        differences += 1
                        print(f"{assignment} {name} {cell}: sliced {sliced[name][cell]}, every cell "
                              f"{whole[name][cell]}", flush=True)
            print(f"{assignment}: {len(variants)} {'alternatives' if alternatives else 'mutants'} compared",
                  flush=True)
    return differences


def main(argv: list[str] | None = None) -> None:
    """``run REQUEST RESULT`` (the child process), ``measure [ASSIGNMENT ...] [--repeat K] [--every-cell]`` or
    ``compare [ASSIGNMENT ...]``."""
    parser = argparse.ArgumentParser(prog=f"python -m {_RUNNER}")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="evaluate a request (what mutant_verdicts starts)")
    run.add_argument("request", type=Path)
    run.add_argument("result", type=Path)
    measure = commands.add_parser("measure", help="time the evaluation of every mutant of each chapter")
    measure.add_argument("assignments", nargs="*")
    measure.add_argument("--repeat", type=int, default=3)
    measure.add_argument("--every-cell", action="store_true", help="forks run every cell after the variant's")
    compare = commands.add_parser("compare", help="sliced forks against forks that run every cell: the same verdicts")
    compare.add_argument("assignments", nargs="*")
    args = parser.parse_args(argv)
    if args.command == "run":
        _run(json.loads(args.request.read_text()), args.result.resolve())
        return
    from autograde.course import assignment_ids

    if args.command == "measure":
        _measure(args.assignments or assignment_ids(), args.repeat, not args.every_cell)
    else:
        sys.exit(1 if _compare(args.assignments or assignment_ids()) else 0)


if __name__ == "__main__":
    main()
