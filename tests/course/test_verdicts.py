"""The in-process verdicts (tests/support/verdicts.py) are the grader's: on small notebooks, and against real grading.

test_mutants.py and test_one_mistake_one_cell.py read every mutant's verdicts
from the in-process evaluation instead of grading each notebook in a sandboxed
kernel; `test_in_process_verdicts_agree_with_the_grader` is what entitles them
to: per chapter, the reference, the notebook as released and one sampled
mutant get the same verdict (and message) both ways. (The correct alternatives
are graded by the real command only: test_alternatives.py.)
"""
from __future__ import annotations

import time

import pytest

from autograde.course import assignment_ids, graded_cell_ids
from tests.support.synthetic import mutant_student
from tests.support.verdicts import SAMPLED_MUTANTS, notebook_verdicts


def agreement_students(assignment: str) -> list[str]:
    """The students whose verdicts both ways must agree on: the students of the chapter's graded batch that the
    in-process evaluation of its mutants also decides (the reference, the untouched notebook and the chapter's sampled
    mutant; the alternatives are graded by the real command alone, test_alternatives.py)."""
    students = ["reference", "untouched"]
    students += [mutant_student(g, p) for a, g, p in SAMPLED_MUTANTS if a == assignment]
    return students


def test_one_mutant_per_chapter_is_sampled():
    chapters = [a for a, _, _ in SAMPLED_MUTANTS]
    assert sorted(chapters) == assignment_ids(), f"SAMPLED_MUTANTS covers {sorted(chapters)}, not every chapter once"


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("assignment", assignment_ids())
def test_in_process_verdicts_agree_with_the_grader(grade_chapter, in_process_verdicts, assignment):
    scores = grade_chapter(assignment)["scores"]
    verdicts = in_process_verdicts(assignment)
    differ = []
    for student in agreement_students(assignment):
        for cell in graded_cell_ids(assignment):
            row = scores[(student, assignment, cell)]
            graded = (float(row["score"]) >= float(row["max_score"]), row["message"])
            if verdicts[student][cell] != graded:
                differ.append(f"{student} {cell}: in-process {verdicts[student][cell]}, graded {graded}")
    assert not differ, f"{len(differ)} verdicts of {assignment} differ from the grader's:\n" + "\n".join(differ[:20])


# The evaluator on a notebook of its own: each behaviour that decides a verdict, in one small run.
GIVEN = {"cell_type": "code", "source": "import numpy as np\nimport sys\nimport warnings\ncalls = []",
         "nbgrader": {"grade_id": "given", "locked": True, "solution": False, "grade": False}}
SOLUTION = {"cell_type": "code", "source": "def add_one(x):\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION",
            "nbgrader": {"grade_id": "add_one", "solution": True, "grade": False}}
SECOND = {"cell_type": "code", "source": "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION",
          "nbgrader": {"grade_id": "double", "solution": True, "grade": False}}


def grade_cell(grade_id: str, source: str) -> dict:
    return {"cell_type": "code", "source": source,
            "nbgrader": {"grade_id": grade_id, "grade": True, "solution": False, "points": 1, "locked": True}}


CELLS = [
    GIVEN, SOLUTION,
    {"cell_type": "markdown", "source": "Tests of add_one.", "nbgrader": {}},
    grade_cell("test_add_one", "assert add_one(1) == 2, f'add_one(1) should be 2, not {add_one(1)}'"),
    # Writes to stderr and warns, and passes: the grader relabels a test cell's stderr (StderrIsNotFailure).
    grade_cell("test_add_one_noisy", "print('a note', file=sys.stderr)\nwarnings.warn('a warning')\n"
                                    "assert np.allclose(add_one(np.zeros(2)), 1), 'add_one(zeros) should be ones'"),
    SECOND,
    grade_cell("test_double", "assert double(3) == 6, f'double(3) should be 6, not {double(3)}'"),
    grade_cell("test_double_calls", "assert calls == [], f'calls is {calls}'"),
]
SYNTHETIC = {
    "reference": {},
    "add_one/off_by_one": {"add_one": "def add_one(x):\n    return x + 2"},
    "add_one/loops": {"add_one": "def add_one(x):\n    while True:\n        pass"},
    "add_one/loops_in_the_cell": {"add_one": "while True:\n    pass"},
    # A KeyboardInterrupt the code raises itself is an error like any other, not a timeout.
    "add_one/raises_interrupt": {"add_one": "def add_one(x):\n    raise KeyboardInterrupt('mine')"},
    # A cell that writes to stderr before a test: nothing to do with any verdict.
    "add_one/prints_to_stderr": {"add_one": "def add_one(x):\n    print('debug', file=sys.stderr)\n    return x + 1"},
    "double/wrong": {"double": "def double(x):\n    calls.append(x)\n    return x"},
    "both/wrong": {"add_one": "def add_one(x):\n    return x", "double": "def double(x):\n    return x"},
}
SYNTHETIC_TIMEOUT = 1  # second per cell (the cells that should pass take microseconds)


@pytest.fixture(scope="module")
def synthetic():
    start = time.monotonic()
    verdicts = notebook_verdicts(CELLS, SYNTHETIC, timeout=SYNTHETIC_TIMEOUT)
    return verdicts, time.monotonic() - start


def failed(verdicts: dict) -> dict[str, str]:
    """The failed test cells of one variant, with their messages."""
    return {cell: message for cell, (passed, message) in verdicts.items() if not passed}


@pytest.mark.slow  # (the synthetic notebook runs in worker processes, one variant waits out its time limit)
def test_the_reference_passes_every_cell(synthetic):
    assert failed(synthetic[0]["reference"]) == {}


@pytest.mark.slow
def test_a_wrong_answer_fails_its_own_cell_with_the_tests_message(synthetic):
    assert failed(synthetic[0]["add_one/off_by_one"]) == {
        "test_add_one": "AssertionError: add_one(1) should be 2, not 3",
        "test_add_one_noisy": "AssertionError: add_one(zeros) should be ones"}


@pytest.mark.slow
def test_a_test_cell_writing_to_stderr_keeps_its_points(synthetic):
    # The grader relabels a test cell's stderr as stdout, so a warning or a note never costs a correct answer.
    assert synthetic[0]["reference"]["test_add_one_noisy"] == (True, "")
    assert failed(synthetic[0]["add_one/prints_to_stderr"]) == {}


@pytest.mark.slow
def test_a_cell_past_the_time_limit_times_out_and_the_rest_still_runs(synthetic):
    verdicts, seconds = synthetic
    message = "the cell ran longer than the time limit and was interrupted"
    assert failed(verdicts["add_one/loops"]) == {"test_add_one": message, "test_add_one_noisy": message}
    # An answer cell that never finished: what fails after it counts as the timeout's consequence, as in the grader.
    then = "an earlier cell ran longer than the time limit; then NameError: name 'add_one' is not defined"
    assert failed(verdicts["add_one/loops_in_the_cell"]) == {"test_add_one": then, "test_add_one_noisy": then}
    assert failed(verdicts["add_one/raises_interrupt"]) == {"test_add_one": "KeyboardInterrupt: mine",
                                                            "test_add_one_noisy": "KeyboardInterrupt: mine"}
    # Three cells at the limit, in two forks; the rest took a few seconds even on a busy machine.
    assert seconds < 3 * SYNTHETIC_TIMEOUT + 60, f"the evaluation took {seconds:.0f} s"


DRAWN = grade_cell("test_add_one_drawn", (
    "from hypothesis import given, settings, strategies as st\n\n"
    "@settings(max_examples=100, derandomize=True, database=None)\n@given(st.integers(0, 10_000))\n"
    "def check(x):\n    assert add_one(x) == x + 1, f'add_one({x}) is {add_one(x)}'\n\ncheck()"))


@pytest.mark.slow
def test_a_failing_example_shrinks_only_where_the_message_is_compared_with_the_graders():
    # Both fail, as in the grader; only the variant named exact shrinks its example to the smallest, x = 10.
    wrong = "def add_one(x):\n    return x + 2 if x >= 10 else x + 1"
    verdicts = notebook_verdicts([GIVEN, SOLUTION, DRAWN], {"shrunk": {"add_one": wrong}, "unshrunk": {"add_one": wrong}},
                                 timeout=30, exact={"shrunk"})
    shrunk, unshrunk = (verdicts[name]["test_add_one_drawn"] for name in ("shrunk", "unshrunk"))
    assert not shrunk[0] and not unshrunk[0], "a wrong answer must fail however its example is reported"
    assert "add_one(10) is 12" in shrunk[1], shrunk
    assert "add_one(10) is 12" not in unshrunk[1] and "add_one(" in unshrunk[1], unshrunk


@pytest.mark.slow
def test_each_variant_runs_apart_from_the_others(synthetic):
    # double/wrong appends to `calls` in its own fork: neither the reference nor another variant sees it.
    verdicts = synthetic[0]
    assert failed(verdicts["double/wrong"]) == {"test_double": "AssertionError: double(3) should be 6, not 3",
                                                "test_double_calls": "AssertionError: calls is [3, 3]"}
    assert set(failed(verdicts["both/wrong"])) == {"test_add_one", "test_add_one_noisy", "test_double"}
    assert failed(verdicts["add_one/off_by_one"]).keys() == {"test_add_one", "test_add_one_noisy"}


def test_a_variant_of_no_solution_cell_is_refused():
    with pytest.raises(KeyError, match="no solution cell"):
        notebook_verdicts(CELLS, {"typo": {"add_on": "def add_on(x): return x"}})


@pytest.mark.slow
def test_a_known_mutant_fails_its_own_cells_and_the_reference_none(in_process_verdicts):
    verdicts = in_process_verdicts("01-weighted-sum")
    assert failed(verdicts["reference"]) == {}
    lost = failed(verdicts["mutant--softmax--wrong_axis"])
    assert set(lost) == {"test_softmax", "test_softmax_masking", "test_softmax_axes"}, lost
    assert lost["test_softmax_axes"].startswith("AssertionError: softmax(x, axis=-1) must sum to 1 along axis -1")


def test_verdicts_are_kept_between_runs_under_a_key_of_what_decides_them(tmp_path, monkeypatch):
    # The evaluation itself is replaced by a counter: what is tested is when a kept result is reused.
    from tests.support import verdicts as module

    runs = []

    def evaluate(cells, variants, timeout, jobs, assignment, sliced=True, exact=()):
        runs.append(sorted(variants))
        return {name: {"test_softmax": (name == "reference", "" if name == "reference" else "AssertionError: wrong")}
                for name in variants}

    monkeypatch.setattr(module, "notebook_verdicts", evaluate)
    first = "01-weighted-sum"
    wrong = {"softmax": "def softmax(x, axis=-1):\n    return x\n"}
    kept = module.mutant_verdicts(first, {"reference": {}, "wrong": wrong}, cache=tmp_path)
    assert module.mutant_verdicts(first, {"reference": {}, "wrong": wrong}, cache=tmp_path) == kept
    assert len(runs) == 1, "an unchanged evaluation was not reused"
    assert kept["wrong"]["test_softmax"] == (False, "AssertionError: wrong")
    # Anything the verdicts depend on changes the key: another variant's code, the time limit.
    module.mutant_verdicts(first, {"reference": {}, "wrong": {"softmax": wrong["softmax"] + "# changed\n"}},
                           cache=tmp_path)
    module.mutant_verdicts(first, {"reference": {}, "wrong": wrong}, timeout=30, cache=tmp_path)
    # Which variants shrink their failing examples changes their messages.
    module.mutant_verdicts(first, {"reference": {}, "wrong": wrong}, cache=tmp_path, exact={"wrong"})
    assert len(runs) == 4, "a changed variant, time limit or shrinking reused verdicts decided for something else"


@pytest.mark.slow
def test_a_fork_runs_only_the_cells_its_variant_can_change_and_decides_as_a_fork_that_runs_every_cell(tmp_path):
    # A costly cell (a training run, here one that logs its runs to a file) between add_one's tests and double: a
    # fork of add_one does not run it again (nothing after it reads add_one), a fork of both does (the cell that
    # reads double also reads what the costly cell made); the cell that reads double runs again in double's forks.
    runs = tmp_path / "runs.txt"

    def logged(grade_id: str, code: str) -> dict:
        return {"cell_type": "code", "nbgrader": {"grade_id": grade_id, "solution": False, "grade": False},
                "source": f"with open({str(runs)!r}, 'a') as log:\n    print({grade_id!r}, file=log)\n{code}"}

    cells = [*CELLS[:5], logged("costly", "trained = 42"), *CELLS[5:], logged("uses_double", "doubled = double(trained)"),
             grade_cell("test_trained", "assert doubled == 84, doubled")]
    variants = {"reference": {}, "add_one/off_by_one": SYNTHETIC["add_one/off_by_one"],
                "double/wrong": SYNTHETIC["double/wrong"], "both/wrong": SYNTHETIC["both/wrong"]}
    sliced = notebook_verdicts(cells, variants, timeout=10)
    logged_runs = runs.read_text().split()
    assert (logged_runs.count("costly"), logged_runs.count("uses_double")) == (2, 3), logged_runs
    assert failed(sliced["double/wrong"])["test_trained"] == "AssertionError: 42"
    assert sliced["add_one/off_by_one"]["test_trained"] == (True, "")
    runs.unlink()
    assert notebook_verdicts(cells, variants, timeout=10, sliced=False) == sliced
    assert runs.read_text().split().count("costly") == 3, "without slicing, a fork runs every cell after its variant's"


def test_the_key_covers_the_cells_and_the_grader(monkeypatch):
    from autograde.results import cache
    from tests.support.verdicts import verdicts_key

    cells = [{"source": "x = 1", "grade_id": "test_x"}]
    key = verdicts_key(cells, {"reference": {}}, 60)
    assert verdicts_key([{"source": "x = 2", "grade_id": "test_x"}], {"reference": {}}, 60) != key
    monkeypatch.setattr(cache, "grader_fingerprint", lambda: "another grader")
    assert verdicts_key(cells, {"reference": {}}, 60) != key


@pytest.mark.slow
def test_a_cell_starved_of_cpu_keeps_its_verdict_and_a_sleeping_one_still_times_out():
    # The evaluator charges a cell as the grader's CellClock does: time spent waiting for a CPU that other programs
    # hold is not counted (a busy machine once timed out this file's 1 s cells), sleeping is.
    import os
    import subprocess
    import sys

    from autograde.run.clock import run_queue_wait

    if run_queue_wait(os.getpid()) is None:
        pytest.skip("this kernel does not report a process's run-queue time (/proc/<pid>/schedstat)")
    burn = ("import time\n_s = time.process_time()\nwhile time.process_time() - _s < 0.5:\n    pass\n")
    variants = {"starved": {"add_one": burn + "def add_one(x):\n    return x + 1"},
                "sleeps": {"add_one": "import time\ntime.sleep(3)\ndef add_one(x):\n    return x + 1"}}
    core, saved = max(os.sched_getaffinity(0)), os.sched_getaffinity(0)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(4)]
    try:
        for process in busy:
            os.sched_setaffinity(process.pid, {core})
        os.sched_setaffinity(0, {core})  # (the evaluator and its forks inherit it: a fifth of one core)
        start = time.monotonic()
        verdicts = notebook_verdicts(CELLS, variants, timeout=1)
        took = time.monotonic() - start
    finally:
        os.sched_setaffinity(0, saved)
        for process in busy:
            process.kill()
            process.wait()
    assert took > 2.5, f"the evaluation took {took:.1f} s: the busy loops did not slow it down, nothing is proved"
    assert failed(verdicts["starved"]) == {}, failed(verdicts["starved"])
    assert set(failed(verdicts["sleeps"])) == {"test_add_one", "test_add_one_noisy"}, failed(verdicts["sleeps"])
