"""The reference solutions pass every test cell; the untouched student notebook passes none."""
import pytest

from autograde.course import assignment_ids, cells_checking, graded_cell_ids, solution_cell_ids

CELLS = [(a, g) for a in assignment_ids() for g in graded_cell_ids(a)]
IDS = [f"{a}::{g}" for a, g in CELLS]


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize(("assignment", "grade_id"), CELLS, ids=IDS)
def test_reference_solution_passes(grade_chapter, assignment, grade_id):
    row = grade_chapter(assignment)["scores"][("reference", assignment, grade_id)]
    assert row["status"] == "passed", f"reference solution fails {grade_id}: {row['message']}"
    assert float(row["score"]) == float(row["max_score"]) > 0


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize(("assignment", "grade_id"), CELLS, ids=IDS)
def test_untouched_notebook_scores_zero(grade_chapter, assignment, grade_id):
    row = grade_chapter(assignment)["scores"][("untouched", assignment, grade_id)]
    assert float(row["score"]) == 0.0, f"the untouched notebook earns points on {grade_id}"
    assert row["status"] == "error" and row["message"], row


@pytest.mark.parametrize("assignment", assignment_ids())
def test_every_solution_cell_is_tested(assignment):
    cells = graded_cell_ids(assignment)
    untested = [s for s in solution_cell_ids(assignment) if not cells_checking(s, cells)]
    assert not untested, f"solution cells without test cells: {untested}"


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("assignment", assignment_ids())
def test_reference_totals_full_marks(grade_chapter, assignment):
    row = grade_chapter(assignment)["grades"][("reference", assignment)]
    assert float(row["score"]) == float(row["max_score"]) > 0
