"""The outline feedback is grouped by: exercises, their points, and what each test cell checks."""
import nbformat
import pytest

from autograde.course import assignment_ids, source_notebook
from autograde.pages.outline import describe, outline


def _notebook(*cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    for kind, source, meta in cells:
        cell = nbformat.v4.new_markdown_cell(source) if kind == "md" else nbformat.v4.new_code_cell(source)
        cell.metadata["nbgrader"] = meta
        nb.cells.append(cell)
    return nb


def _test(grade_id, points, source):
    return ("code", source, {"grade": True, "grade_id": grade_id, "points": points, "solution": False})


def test_headings_and_bold_paragraphs_make_exercises():
    nb = _notebook(
        ("md", "# Exercise 1: things\n\nIntro.", {}),
        ("md", "## 1. Softmax (2 points)\n\nWrite it.", {}),
        ("code", "def softmax(x): ...", {"solution": True, "grade_id": "softmax"}),
        _test("test_softmax", 1, "# Visible test: shape and one worked example.\nassert True"),
        _test("test_softmax_edges", 1, "# Hidden tests: an all -inf slice gives zeros.\n### BEGIN HIDDEN TESTS\n"),
        ("md", "## 3–4. Two scores\n\nSome words.\n\n**3. Dot product (1 point).** Write it.", {}),
        _test("test_dot", 1, "# Visible test: one example.\n"),
        ("md", "**4. Cosine (1.5 points).** Write it.", {}),
        _test("test_cosine", 1.5, "# Hidden test (hypothesis): zero vectors score 0.\n"),
    )
    got = [(e.number, e.title, e.stated_points, [t.grade_id for t in e.tests]) for e in outline(nb)]
    assert got == [("1", "Softmax", 2.0, ["test_softmax", "test_softmax_edges"]),
                   ("3", "Dot product", 1.0, ["test_dot"]),
                   ("4", "Cosine", 1.5, ["test_cosine"])]
    assert [e.points for e in outline(nb)] == [2.0, 1.0, 1.5]


def test_a_test_cell_before_any_heading_is_kept_under_setup():
    nb = _notebook(_test("test_imports", 0.5, "# Visible test: the imports work.\n"),
                   ("md", "## 1. Softmax (1 point)", {}), _test("test_softmax", 1, "# Visible test: x.\n"))
    assert [(e.title, [t.grade_id for t in e.tests]) for e in outline(nb)] == [
        ("Setup", ["test_imports"]), ("Softmax", ["test_softmax"])]


@pytest.mark.parametrize("source, expected", [
    ("# Visible test: shape and one worked example.\n# A second line is a note.\nx = 1", ("Shape and one worked example.", False)),
    ("# Hidden tests: an all -inf slice gives zeros.\n", ("An all -inf slice gives zeros.", True)),
    ("# Hidden tests (hypothesis): weights sum to 1.", ("Weights sum to 1.", True)),
    ("# Visible and hidden tests: the chosen value.", ("The chosen value.", False)),
    ("# Visible test: x is read in chunks.", ("x is read in chunks.", False)),           # a name keeps its case
    ("# Hidden tests: a zero query scores 0.", ("A zero query scores 0.", True)),
    ("# Visible test: crossover_length is measured.", ("crossover_length is measured.", False)),
    ("### BEGIN HIDDEN TESTS\nassert False", ("", False)),
    ("assert x == 1  # no description", ("", False)),
])
def test_a_description_is_the_first_comment_line_without_its_kind(source, expected):
    assert describe(source) == expected


def test_a_cell_is_hidden_by_its_hidden_lines_whatever_its_heading_says():
    # One definition (autograde/cells.py): the feedback page and Gradescope both call a cell hidden when it holds
    # hidden tests; the heading "Visible and hidden tests:" made the page say "visible test" where Gradescope hid it.
    mixed = "# Visible and hidden tests: the chosen value.\nassert 1\n### BEGIN HIDDEN TESTS\nassert 2\n### END HIDDEN TESTS"
    nb = _notebook(("md", "## 1. Softmax (2 points)", {}), _test("test_a", 1, mixed),
                   _test("test_b", 1, "# Visible test: the shape.\nassert 1"))
    hidden_only = "# Hidden tests: the value.\n### BEGIN HIDDEN TESTS\nassert 2\n### END HIDDEN TESTS"
    nb.cells.append(_notebook(_test("test_c", 1, hidden_only)).cells[0])
    assert [(t.grade_id, t.hidden, t.visibility) for t in outline(nb)[0].tests] == [
        ("test_a", True, "visible and hidden"), ("test_b", False, "visible"), ("test_c", True, "hidden")]


@pytest.mark.parametrize("assignment", assignment_ids())
def test_every_test_cell_of_the_course_is_described_under_an_exercise_whose_points_add_up(assignment):
    notebook = source_notebook(assignment)
    exercises = outline(notebook)
    graded = [c.metadata["nbgrader"]["grade_id"] for c in notebook.cells
              if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")]
    assert [t.grade_id for e in exercises for t in e.tests] == graded, "every test cell, once, in notebook order"
    for e in exercises:
        assert e.number and e.title != "Setup", f"{assignment}: {[t.grade_id for t in e.tests]} precede every exercise heading"
        assert e.stated_points == e.points, (
            f"{assignment}, exercise {e.number} ({e.title}) states {e.stated_points} points; its test cells carry {e.points}")
        for t in e.tests:
            assert 15 <= len(t.description) <= 120, (
                f"{assignment}: {t.grade_id} needs a one-line description of what it checks (its first comment line), "
                f"not {t.description!r}")
