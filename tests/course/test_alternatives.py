"""Every correct alternative (a right answer written differently) keeps every point, via the real grader.

The mirror image of test_mutants.py: there, plausible wrong answers must lose
points; here, correct answers that differ from the reference (loops, einsum,
float32, torch, other valid module internals, helpers of the student's own)
must earn full marks on every test cell of the notebook, not only on the cells
of the function they replace. The real command grades them in a few notebooks
per chapter (the k-th alternative of every answer cell in one:
tests/support/submissions.py's `alternative_groups`). That an alternative
beside others proves it correct alone rests on the fairness rule that no test
calls the student's answer to another exercise, which test_mutants.py holds
every chapter to (a mistake costs points only in its own cells).
"""
import ast
import builtins
import functools
import re
from collections import Counter

import pytest

from autograde.cells import CellKind, cell_kind
from autograde.course import assignment_ids, graded_cell_ids, solution_cell_ids, source_notebook
from autograde.reference import solution_code
from tests.support.slicing import cell_names
from tests.support.submissions import alternative_group, alternative_groups, alternatives
from tests.support.synthetic import completed_notebook, mutant_code

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
def test_alternative_keeps_every_point(grade_chapter, assignment, grade_id, path):
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


@functools.cache
def names_the_reference_defines(assignment: str) -> frozenset[str]:
    """Every name the student's kernel holds once the reference notebook has run: what its given and answer cells bind
    (its test cells run in the checker, never there), and Python's builtins."""
    bound = set(dir(builtins)) | {"display", "get_ipython"}  # (IPython's, in every kernel)
    for cell in completed_notebook(assignment).cells:
        if cell.cell_type == "code" and cell_kind(cell) != CellKind.TEST:
            names = cell_names(cell.source)
            assert names is not None, f"a cell of {assignment}'s reference notebook cannot be read as Python"
            bound |= names.binds
    return frozenset(bound)


def global_reads(source: str) -> set[str]:
    """The global names `source` reads when it runs and when the functions and classes it defines are called (names
    a comprehension or a lambda binds for itself left out)."""
    names = cell_names(source)
    assert names is not None, "the alternative cannot be read as Python"
    own = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.comprehension):
            own |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Lambda):
            own |= {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    return (names.loads | set().union(*names.bodies.values())) - names.binds - own


@pytest.mark.parametrize(("assignment", "grade_id", "path"), ALTERNATIVES,
                         ids=[f"{a}::{g}/{p.stem}" for a, g, p in ALTERNATIVES])
def test_alternative_leans_on_nothing_another_alternative_defines(assignment, grade_id, path):
    # Alternatives are graded several to a notebook (alternative_groups): one that read a helper another alternative
    # of its notebook defines would pass there and fail beside the reference. Every global name it reads must be one
    # the reference notebook's kernel holds (or its own).
    code = mutant_code(path.read_text(), reference_solutions(assignment)[grade_id])
    foreign = global_reads(code) - names_the_reference_defines(assignment)
    assert not foreign, f"{path.name} reads {sorted(foreign)}, which neither it nor the reference notebook defines"


def test_a_helper_of_another_alternative_is_found():
    reference = names_the_reference_defines("01-weighted-sum")
    assert global_reads("def softmax(x, axis=-1):\n    return my_exp(x) / 2\n") - reference == {"my_exp"}
    assert not global_reads("def my_exp(x):\n    return np.exp(x)\n\ndef softmax(x, axis=-1):\n    return my_exp(x)\n") - reference


# What an alternative must not do, as it shares a notebook with others: change state another one's code reads.
GLOBAL_STATE = re.compile(r"\b(?:torch\.set_default_dtype|torch\.set_default_device|torch\.manual_seed|np\.random\.seed"
                          r"|random\.seed|torch\.set_num_threads|np\.seterr|warnings\.(?:simplefilter|filterwarnings))\s*\(")


@pytest.mark.parametrize(("assignment", "grade_id", "path"), ALTERNATIVES,
                         ids=[f"{a}::{g}/{p.stem}" for a, g, p in ALTERNATIVES])
def test_alternative_changes_no_state_another_alternative_reads(assignment, grade_id, path):
    # Beside other alternatives in one notebook, one that set a default dtype or a seed could make another pass (or
    # fail) there only; the in-process run of each alone, which caught that, is gone.
    code = mutant_code(path.read_text(), reference_solutions(assignment)[grade_id])
    found = GLOBAL_STATE.findall(code)
    assert not found, f"{path.name} changes global state ({found}): an alternative must not, as it shares a notebook"


def test_a_change_of_global_state_is_found():
    assert GLOBAL_STATE.findall("torch.set_default_dtype(torch.float64)\nx = 1") == ["torch.set_default_dtype("]
    assert not GLOBAL_STATE.findall("torch.get_default_dtype()")
