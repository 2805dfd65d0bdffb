"""One definition of a cell's kind (autograde/cells.py): every step that asks "is this a test cell?" agrees, also on
a cell nbgrader marks both solution and grade (its manually graded answer), which some steps took for a test and
others for an answer."""
import nbformat
import pytest

from autograde import course, gradescope
from autograde.cells import CellKind, cell_kind
from autograde.results import classify
from autograde.run import execute


def cell(cell_type="code", **nbgrader):
    new = (nbformat.v4.new_code_cell if cell_type == "code" else nbformat.v4.new_markdown_cell)("x = 1")
    if nbgrader:
        new.metadata["nbgrader"] = {"grade_id": "c", "points": 1, **nbgrader}
    return new


@pytest.mark.parametrize("made, kind", [
    (cell(solution=True), CellKind.ANSWER), (cell(grade=True), CellKind.TEST), (cell(), CellKind.GIVEN),
    (cell(grade=False, solution=False), CellKind.GIVEN), (cell("markdown", grade=True), CellKind.TEXT),
    (cell(solution=True, grade=True), CellKind.ANSWER)])  # (nbgrader's manually graded answer: no test here)
def test_each_kind(made, kind):
    assert cell_kind(made) == kind
    assert cell_kind(dict(made)) == kind, "a plain dict reads the same"


def test_every_step_agrees_on_a_cell_marked_both_solution_and_grade(monkeypatch):
    notebook = nbformat.v4.new_notebook(cells=[cell(solution=True, grade=True, grade_id="manual"),
                                               cell(grade=True, grade_id="test_f")])
    notebook.cells[1].source = "### BEGIN HIDDEN TESTS\nassert True\n### END HIDDEN TESTS"
    for module in (course, classify, gradescope):
        monkeypatch.setattr(module, "source_notebook", lambda assignment: notebook)
    tests = [c.metadata["nbgrader"]["grade_id"] for c in notebook.cells if execute._is_test(c)]
    assert tests == ["test_f"]
    assert course.graded_cell_ids("x") == tests
    assert [grade_id for grade_id, _ in classify.graded_cells("x")] == tests
    assert gradescope.hidden_cells("x") == {"test_f"}
