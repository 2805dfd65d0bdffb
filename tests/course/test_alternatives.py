"""Every correct alternative (a right answer written differently) keeps every point, via the real grader.

The mirror image of test_mutants.py: there, plausible wrong answers must lose
points; here, correct answers that differ from the reference (loops, einsum,
float32, torch, other valid module internals, helpers of the student's own)
must earn full marks on every test cell of the notebook, not only on the cells
of the function they replace. The real command grades them in a few notebooks
per chapter (the k-th alternative of every answer cell in one:
tests/support/submissions.py's `alternative_groups`); each is also decided
alone, in-process.
"""
import functools
from collections import Counter

import pytest

from autograde.course import assignment_ids, graded_cell_ids, solution_cell_ids, source_notebook
from autograde.reference import solution_code
from tests.support.submissions import alternative_group, alternative_groups, alternatives
from tests.support.synthetic import alternative_student, mutant_code

ALTERNATIVES = alternatives()


@functools.cache
def reference_solutions(assignment: str) -> dict[str, str]:
    """The reference code of each solution cell of `assignment`, by grade id (read once per assignment)."""
    return {c.metadata["nbgrader"]["grade_id"]: solution_code(c.source) for c in source_notebook(assignment).cells
            if c.metadata.get("nbgrader", {}).get("solution")}


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize(("assignment", "grade_id", "path"), ALTERNATIVES,
                         ids=[f"{a}::{g}/{p.stem}" for a, g, p in ALTERNATIVES])
def test_alternative_keeps_every_point(grade_chapter, in_process_verdicts, assignment, grade_id, path):
    # Through the real command, in the notebook that holds it beside one alternative of each other answer cell.
    graded = grade_chapter(assignment)
    student = alternative_group(assignment, grade_id, path)
    rows = [graded["scores"][(student, assignment, c)] for c in graded_cell_ids(assignment)]
    lost = [f"{r['grade_id']} ({r['status']}: {r['message']})" for r in rows if float(r["score"]) < float(r["max_score"])]
    beside = sorted(p.name for g, p in alternative_groups(assignment)[student].items() if g != grade_id)
    assert not lost, (f"the correct alternative {path.name} of {grade_id}, graded in the notebook {student} beside "
                      f"{beside}, loses points on {lost}")
    grade = graded["grades"][(student, assignment)]
    assert float(grade["score"]) == float(grade["max_score"]) > 0
    # Alone, the rest of the notebook the reference (in-process: tests/support/verdicts.py, which test_verdicts.py
    # checks against the grader): nothing it leans on comes from another alternative.
    alone = in_process_verdicts(assignment, alternatives=True)[alternative_student(grade_id, path)]
    failed = {c: message for c, (passed, message) in alone.items() if not passed}
    assert not failed, f"the correct alternative {path.name} of {grade_id}, alone, fails {failed}"


@pytest.mark.parametrize("assignment", assignment_ids())
def test_every_graded_cell_has_two_alternatives(assignment):
    counts = Counter(g for a, g, _ in ALTERNATIVES if a == assignment)
    few = {g: counts[g] for g in solution_cell_ids(assignment) if counts[g] < 2}
    assert not few, f"solution cells with fewer than 2 alternatives under tests/alternatives/{assignment}/: {few}"


@pytest.mark.parametrize(("assignment", "grade_id", "path"), ALTERNATIVES,
                         ids=[f"{a}::{g}/{p.stem}" for a, g, p in ALTERNATIVES])
def test_alternative_differs_from_the_reference_and_says_how(assignment, grade_id, path):
    solutions = reference_solutions(assignment)
    assert grade_id in solutions, f"{path} replaces no solution cell of {assignment}"
    text = path.read_text()
    assert text.startswith("# ") and len(text.splitlines()[0]) > 15, f"{path} must start with a comment saying what it does differently"
    reference = solutions[grade_id]
    code = mutant_code(text, reference)
    body = [line for line in code.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert body != [line for line in reference.splitlines() if line.strip() and not line.lstrip().startswith("#")], (
        f"{path} is the reference solution again: it proves nothing")
