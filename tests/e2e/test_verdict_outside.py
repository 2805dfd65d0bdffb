"""The verdict is decided outside the student's process (issue 30): attacks that worked while the tests ran in the
student's kernel, and honest answers the guard there failed, graded through the real command.

The submissions are tests/support/attacks.py's; OLD_SCORES there records what each attack scored on main before
the checker. Now every attack scores what its answers are worth, and every honest answer full marks.
"""
import pytest

from tests.support.attacks import (
    FIRST,
    HONEST_FULL,
    OLD_SCORES,
    WORTH,
    attack_submissions,
    honest_submissions,
)
from tests.support.batches import CHAPTER_JOBS, CHAPTER_OPTIONS, grade_cached
from tests.support.synthetic import write_submission


@pytest.fixture(scope="session")
def outside(tmp_path_factory):
    """{student: (total, {grade_id: scores.csv row})} of the attacks and honest answers, graded in one batch."""
    def write(folder):
        for student, (assignment, nb) in (attack_submissions() | honest_submissions()).items():
            write_submission(nb, folder, student, assignment)

    # 60 s per cell: the searching answers walk every object of a kernel with torch loaded, in every test cell,
    # which took more than 10 s on a loaded CI machine.
    batch = grade_cached("verdict-outside", write, tmp_path_factory.mktemp("outside"), timeout=60,
                         jobs=CHAPTER_JOBS, options=CHAPTER_OPTIONS)  # (one worker, one thread per kernel: less CPU)
    wanted = {student: assignment for student, (assignment, _) in (attack_submissions() | honest_submissions()).items()}
    found = {}
    for (student, assignment), row in batch.grades.items():
        if wanted.get(student) == assignment:
            rows = {g: r for (s, a, g), r in batch.scores.items() if s == student and a == assignment}
            found[student] = (float(row["score"]), rows)
    return found


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("student", sorted(OLD_SCORES))
def test_an_attack_scores_what_its_answers_are_worth(outside, student):
    worth = WORTH[student]
    expected = outside["garbage"][0] if worth == "garbage" else worth
    score, rows = outside[student]
    assert score == expected, (f"{student} scores {score} (worth {expected}; {OLD_SCORES[student]} with the tests in "
                               f"the kernel): " + str({g: r["message"][:80] for g, r in rows.items()
                                                        if r["status"] == "passed"}))
    assert score < OLD_SCORES[student], "the attack no longer reproduces what it did: it tests nothing"


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("student", sorted(honest_submissions()))
def test_an_honest_answer_keeps_full_marks(outside, student):
    score, rows = outside[student]
    assignment = honest_submissions()[student][0]
    lost = {g: f"{r['status']}: {r['message'][:150]}" for g, r in rows.items() if r["status"] != "passed"}
    assert score == HONEST_FULL[assignment], f"{student} lost points: {lost}"


@pytest.mark.slow
@pytest.mark.sandbox
def test_the_garbage_the_attacks_are_measured_against_scores_little(outside):
    # (If the plain garbage scored much, "scores what the garbage scores" would prove little.)
    assert outside["garbage"][0] <= 1.0, outside["garbage"]
    assert outside["garbage"][1]["test_softmax"]["status"] == "failed"
    assert FIRST == honest_submissions()["keeps-a-thread-pool"][0]


# What crossing the boundary costs: a test's round trips to the kernel are recorded per test cell -----------------

def _exchanges(out, student: str, assignment: str, grade_id: str) -> int:
    """The round trips between checker and kernel of one test cell, as the executed notebook records them."""
    import nbformat

    from autograde.run.execute import CHECKER_KEY

    [path] = out.glob(f"nbgrader/worker-*/autograded/{student}/{assignment}/{assignment}.ipynb")
    cell = next(c for c in nbformat.read(path, as_version=4).cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    return cell.metadata[CHECKER_KEY]["exchanges"]


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_correct_block_trains_tinygpt_in_the_kernel_not_call_by_call_across(tmp_path):
    # Training TinyGPT around the grader's lent _CorrectBlock costs a round trip per block call (400 steps, 2 blocks,
    # forward and backward: 1,600 at least); a student's block that computes what _CorrectBlock does trains in the
    # kernel alone (the block check, one call to train, one to evaluate).
    from tests.support.commands import grade_command
    from tests.support.synthetic import completed_notebook

    a = "05-transformer"
    write_submission(completed_notebook(a), tmp_path / "class", "reference", a)
    out = tmp_path / "out"  # (graded afresh: a kept result has no executed notebook to read)
    done = grade_command(tmp_path / "class", out, "--jobs", "1", "--no-similarity")
    assert done.returncode == 0, done.stderr[-2000:]
    own = _exchanges(out, "reference", a, "test_TinyGPT_loss")
    assert own < 400 * 2, f"the reference's training test made {own} round trips: it trained across the boundary"
    # The count sees lent calls: the causal test runs the reference's TinyGPT on the lent _CorrectBlock (two forward
    # passes through two blocks), and each block call crosses.
    lent = _exchanges(out, "reference", a, "test_TinyGPT_causal")
    assert lent >= 2 * 2, f"the causal test's four calls of lent blocks made only {lent} round trips"


def test_left_alive_finds_what_a_call_keeps_also_in_a_cache_an_earlier_call_filled():
    """The probe behind chapter 7's weak-reference check (run/probes.py, `left_alive_by` in the notebook): a tensor
    that a call reads from a cache filled by an earlier call is alive after it and found, every call; the call's
    temporaries are not, and neither is what the inputs and the output hold."""
    import torch

    from autograde.run.probes import left_alive

    cache = {}

    def cached(x):
        kept = cache.setdefault("table", torch.ones(5, 5))  # filled by the first call, read by every later one
        return (x * 2 + kept.sum()).exp()

    def plain(x):
        return (x * 2 + torch.ones(5, 5).sum()).exp()

    x = torch.randn(3)
    for _ in range(2):
        alive = left_alive(cached, (x,))
        assert {elements for _, _, elements, _, owner in alive if owner == "new"} == {25}, alive
    alive = left_alive(plain, (x,), wrt=(0,))
    assert not [entry for entry in alive if entry[-1] == "new"], alive
    assert {owner for *_, owner in alive} <= {"input 0", "output"}, alive


def test_held_by_counts_what_an_object_keeps_however_it_stores_it():
    """The probe behind chapter 8's window-cache bound (run/probes.py, `held_by` in the notebook): tensors and arrays
    in attributes, slots, lists, tuples, dicts, deques, sets and nested objects are found, each once (a cycle ends,
    the same view twice counts once), Python floats count one, integers and functions nothing."""
    from collections import deque

    import numpy as np
    import torch

    from autograde.run.probes import held_by

    class Slotted:
        __slots__ = ("kept",)

        def __init__(self):
            self.kept = torch.zeros(2, 3)

    class Cache:
        pass

    cache, inner = Cache(), Cache()
    shared = torch.ones(4, 5)
    cache.recent = deque([(shared[:1], shared[1:2])], maxlen=3)
    cache.first = [shared[:1]]  # the same view as in the deque: counted once
    cache.table = {"a": np.ones(7), "b": {torch.arange(3).sum().item(): 0.5}}
    cache.inner, inner.parent, inner.slotted = inner, cache, Slotted()  # a cycle
    cache.count, cache.positions, cache.hook = 12, torch.arange(6), print
    found = held_by(cache)
    floating = sum(elements for *_, elements, is_float in found if is_float)
    assert floating == 5 + 5 + 7 + 1 + 6, found
    assert sorted(elements for *_, elements, is_float in found if not is_float) == [6], found
    assert {path for path, *_ in found} >= {".inner.slotted.kept", ".positions", ".table['a']"}, found


def test_held_by_counts_the_elements_views_of_one_storage_cover_once():
    """A cache whose keys and values are two views of one buffer, or which keeps a view of its own kept tensor (the
    sinks' slice), holds each element once: a correct window cache written that way must not count twice."""
    import torch

    from autograde.run.probes import held_by

    class Cache:
        pass

    halves, sliced, apart = Cache(), Cache(), Cache()
    buffer = torch.zeros(2, 3, 6, 10, dtype=torch.float64)
    halves.keys, halves.values = buffer[..., :5], buffer[..., 5:]
    sliced.K = torch.zeros(2, 3, 6, 5)
    sliced.sinks = sliced.K[:, :, :2]
    apart.a, apart.b = torch.zeros(3), torch.zeros(3)  # two storages: both count

    def floats(cache):
        return sum(elements for *_, elements, is_float in held_by(cache) if is_float)

    assert floats(halves) == 2 * 3 * 6 * 10
    assert floats(sliced) == 2 * 3 * 6 * 5
    assert floats(apart) == 6
