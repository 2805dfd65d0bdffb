"""exercises/ is exactly what compiling solutions/ gives, and it holds no solution or hidden test."""
import nbformat
import pytest

from autograde.course import EXERCISES, assignment_ids, source_notebook
from tests.support.leaks import secret_lines

ASSIGNMENTS = assignment_ids()


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercises_are_compiled_from_solutions(compiled_course, assignment):
    # `python -m autograde compile` (what `make exercises` runs), in a copy whose exercises/ it wrote afresh.
    name = f"{assignment}/{assignment}.ipynb"
    committed = EXERCISES / name
    assert committed.is_file(), f"{committed} is missing: run `make exercises`"
    assert committed.read_bytes() == (compiled_course / "exercises" / name).read_bytes(), (
        f"{committed} is not what compiling solutions/{assignment}/{assignment}.py gives: run `make exercises`"
    )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_no_solution_or_hidden_test_in_exercises(assignment):
    text = (EXERCISES / assignment / f"{assignment}.ipynb").read_text()
    secrets = secret_lines(assignment)
    assert len(secrets) > 20, "the leak check found too few secret lines to be meaningful"
    leaked = [line for line in secrets if line in text]
    assert not leaked, f"solution or hidden-test lines in the student notebook: {leaked[:5]}"
    assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_student_notebook_states_points(assignment):
    nb = source_notebook(assignment)
    total = sum(c.metadata["nbgrader"].get("points", 0) for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade"))
    assert total > 0
    # What the student gets: the released notebook's opening cell, not the instructor's source.
    intro = nbformat.read(EXERCISES / assignment / f"{assignment}.ipynb", as_version=4).cells[0]
    assert intro.cell_type == "markdown" and f"**{total:g}**" in intro.source, (
        f"the opening cell should state the total of {total} points")
