"""exercises/ is exactly what compiling solutions/ gives, and it holds no solution or hidden test."""
import re

import pytest

from autograde.compile import compile_assignments
from autograde.course import EXERCISES, assignment_ids, source_notebook

ASSIGNMENTS = assignment_ids()


SECRET_BLOCK = re.compile(r"### BEGIN (?:SOLUTION|HIDDEN TESTS)\n(.*?)### END (?:SOLUTION|HIDDEN TESTS)", re.S)


def public_lines() -> set[str]:
    """Stripped lines that some source shows students anyway (outside solutions and hidden tests)."""
    return {line.strip() for a in ASSIGNMENTS for cell in source_notebook(a).cells
            for line in SECRET_BLOCK.sub("", cell.source).splitlines()}


def secret_lines(assignment: str) -> list[str]:
    """Non-trivial lines of solution code and hidden tests in the source of `assignment`."""
    lines = [line.strip() for cell in source_notebook(assignment).cells
             for block in SECRET_BLOCK.findall(cell.source) for line in block.splitlines()]
    # Short lines ("return out"), imports, random generators and lines students see elsewhere give nothing away.
    public = public_lines()
    boilerplate = re.compile(r"^(#|import |from \S+ import |rng = np\.random\.default_rng\(\d+\)$)")
    return [line for line in lines if len(line) >= 25 and not boilerplate.match(line) and line not in public]


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
