"""exercises/ is exactly what compiling solutions/ gives, and it holds no solution or hidden test."""
import re

import pytest

from autograde.compile import compile_assignments
from autograde.course import EXERCISES, assignment_ids, source_notebook

ASSIGNMENTS = assignment_ids()


def secret_lines(assignment: str) -> list[str]:
    """Non-trivial lines of solution code and hidden tests in the source of `assignment`."""
    lines = []
    for cell in source_notebook(assignment).cells:
        for block in re.findall(r"### BEGIN (?:SOLUTION|HIDDEN TESTS)\n(.*?)### END", cell.source, re.S):
            lines += [line.strip() for line in block.splitlines()]
    # Short lines such as "return out" could appear anywhere; they give nothing away.
    return [line for line in lines if len(line) >= 25 and not line.startswith("#")]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    dest = tmp_path_factory.mktemp("exercises")
    compile_assignments(ASSIGNMENTS, dest)
    return dest


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercises_are_compiled_from_solutions(compiled, assignment):
    name = f"{assignment}/{assignment}.ipynb"
    committed = EXERCISES / name
    assert committed.is_file(), f"{committed} is missing: run `make exercises`"
    assert committed.read_bytes() == (compiled / name).read_bytes(), (
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
    intro = nb.cells[0].source
    assert f"**{total:g}**" in intro, f"the opening cell should state the total of {total} points"
