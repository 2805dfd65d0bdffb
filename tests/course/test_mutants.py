"""Every mutant (a plausible wrong answer) loses points on its function's tests, and only there.

The verdicts are decided in-process (tests/support/verdicts.py: the notebook's
cells in one IPython shell, a fork per mutant after the
shared prefix), which test_verdicts.py checks against the real grader on one
mutant per chapter and every alternative.
"""
import re
from collections import Counter

import pytest

from autograde.course import assignment_ids, cells_checking, graded_cell_ids, solution_cell_ids
from tests.support.submissions import mutants
from tests.support.synthetic import mutant_student

MUTANTS = mutants()
_EXCEPTION_NAME = re.compile(r"^[A-Za-z_][\w.]*(:\s*|$)")


def says_something(message: str) -> bool:
    """Whether a test cell's message says more than the name of the exception it raised (a bare `AssertionError`,
    `ValueError:` or an empty message say nothing a student can act on)."""
    return len(_EXCEPTION_NAME.sub("", message.strip(), count=1).split()) >= 2


@pytest.mark.parametrize(("message", "says"), [
    ("", False), ("AssertionError", False), ("AssertionError: ", False), ("numpy.linalg.LinAlgError", False),
    ("KeyError: 'x'", False), ("AssertionError: row 0 sums to 2.0", True), ("NameError: name 'model' is not defined", True),
    ("scored less than full marks", True),
])
def test_a_bare_exception_name_says_nothing(message, says):
    assert says_something(message) == says

# Where a wrong answer unavoidably costs points outside its own cells, and why. Each entry is checked to still
# cost elsewhere, so the list cannot silently go stale.
# (Chapter 1's weighted_average/sum_over_first_axis was here until exercise 9's tests ran the student's cell again
# with the tests' own functions when it stopped on an earlier function's error.)
COSTS_ELSEWHERE: dict[tuple[str, str, str], str] = {}


@pytest.mark.slow
@pytest.mark.parametrize(("assignment", "grade_id", "path"), MUTANTS, ids=[f"{a}::{g}/{p.stem}" for a, g, p in MUTANTS])
def test_mutant_loses_points(in_process_verdicts, assignment, grade_id, path):
    verdicts = in_process_verdicts(assignment)[mutant_student(grade_id, path)]
    cells = cells_checking(grade_id, graded_cell_ids(assignment))
    assert cells, f"{grade_id} has no test cells"
    lost = {c: verdicts[c][1] for c in cells if not verdicts[c][0]}
    assert lost, f"mutant {path.name} of {grade_id} scores full marks on {cells}"
    # A lost point comes with a message that says what is wrong: more than the name of an exception.
    silent = [(c, message) for c, message in lost.items() if not says_something(message)]
    assert not silent, f"mutant {path.name} of {grade_id} loses points without saying why: {silent}"


@pytest.mark.slow
@pytest.mark.parametrize(("assignment", "grade_id", "path"), MUTANTS, ids=[f"{a}::{g}/{p.stem}" for a, g, p in MUTANTS])
def test_a_mistake_costs_points_only_in_its_own_cells(in_process_verdicts, assignment, grade_id, path):
    verdicts = in_process_verdicts(assignment)[mutant_student(grade_id, path)]
    all_cells = graded_cell_ids(assignment)
    own = set(cells_checking(grade_id, all_cells))
    elsewhere = [c for c in all_cells if c not in own and not verdicts[c][0]]
    if (assignment, grade_id, path.stem) in COSTS_ELSEWHERE:
        assert elsewhere, f"{path.name} no longer costs points elsewhere: remove it from COSTS_ELSEWHERE"
    else:
        assert not elsewhere, f"the mistake {path.name} in {grade_id} also costs points in {elsewhere}"


@pytest.mark.parametrize("assignment", assignment_ids())
def test_every_graded_function_has_three_mutants(assignment):
    counts = Counter(g for a, g, _ in MUTANTS if a == assignment)
    few = {g: counts[g] for g in solution_cell_ids(assignment) if counts[g] < 3}
    assert not few, f"solution cells with fewer than 3 mutants under tests/mutants/{assignment}/: {few}"


def test_mutants_name_real_cells():
    cells = {a: solution_cell_ids(a) for a in assignment_ids()}
    assert MUTANTS
    for assignment, grade_id, path in MUTANTS:
        assert grade_id in cells.get(assignment, []), f"{path} replaces no solution cell of {assignment}"
