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
from tests.support.batches import grade_cached
from tests.support.synthetic import write_submission


@pytest.fixture(scope="session")
def outside(tmp_path_factory):
    """{student: (total, {grade_id: scores.csv row})} of the attacks and honest answers, graded in one batch."""
    def write(folder):
        for student, (assignment, nb) in (attack_submissions() | honest_submissions()).items():
            write_submission(nb, folder, student, assignment)

    # 60 s per cell: the searching answers walk every object of a kernel with torch loaded, in every test cell,
    # which took more than 10 s on a loaded CI machine.
    batch = grade_cached("verdict-outside", write, tmp_path_factory.mktemp("outside"), timeout=60)
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
