"""What results.json shows at once and what it holds back with the hidden tests (fast: no grading run)."""
import csv

from autograde import gradescope
from autograde.course import graded_cell_ids, source_notebook
from autograde.results.classify import CellResult, Status

ASSIGNMENT = "01-weighted-sum"


def _points(assignment):
    return {c.metadata["nbgrader"]["grade_id"]: float(c.metadata["nbgrader"].get("points", 0))
            for c in source_notebook(assignment).cells if c.metadata.get("nbgrader", {}).get("grade")}


def _graded(tmp_path, monkeypatch, rows: list[CellResult], notes: list[str]) -> dict:
    """results.json for `rows` and `notes` as the grade command kept them, with grades.csv summing `rows`."""
    monkeypatch.setattr(gradescope, "_rows", lambda out, assignment: (rows, notes))
    with open(tmp_path / "grades.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, ["student_id", "assignment", "raw_score", "score", "max_score"])
        writer.writeheader()
        score = sum(r.score for r in rows)
        writer.writerow({"student_id": gradescope.STUDENT, "assignment": ASSIGNMENT, "raw_score": score,
                         "score": score, "max_score": sum(r.max_score for r in rows)})
    return gradescope.results_from(tmp_path, ASSIGNMENT)


def _results(tmp_path, monkeypatch, failed: str, notes: list[str]) -> dict:
    points = _points(ASSIGNMENT)
    rows = [CellResult(gradescope.STUDENT, ASSIGNMENT, g, 0.0 if g == failed else points[g], points[g],
                       Status.ERROR if g == failed else Status.PASSED, "the kernel died" if g == failed else "")
            for g in graded_cell_ids(ASSIGNMENT)]
    return _graded(tmp_path, monkeypatch, rows, notes)


def test_a_note_naming_a_hidden_test_cell_is_held_back_with_that_cell(tmp_path, monkeypatch):
    hidden = sorted(gradescope.hidden_cells(ASSIGNMENT))
    assert hidden, f"{ASSIGNMENT} has no hidden test cells to try this on"
    cell = hidden[0]
    note = f"The kernel died in cell {cell} (it ran out of memory): that cell was skipped."
    results = _results(tmp_path, monkeypatch, cell, [note])
    assert note not in results["output"], "a note on a hidden test cell is shown before grades are published"
    test = next(t for t in results["tests"] if t["extra_data"]["grade_id"] == cell)
    assert test["visibility"] == gradescope.AFTER_PUBLISHED
    assert note in test["output"], "the held-back note must reach the student with the hidden cell's result"


def test_a_note_on_a_visible_cell_is_shown_at_once(tmp_path, monkeypatch):
    hidden = gradescope.hidden_cells(ASSIGNMENT)
    visible = next(g for g in graded_cell_ids(ASSIGNMENT) if g not in hidden)
    # (a hidden cell's name that contains the visible one's must not hold this note back)
    note = f"The kernel died in cell {visible} (it ran out of memory): that cell was skipped."
    results = _results(tmp_path, monkeypatch, visible, [note])
    assert note in results["output"]


def test_a_note_on_a_hidden_cell_without_a_box_is_still_held_back(tmp_path, monkeypatch):
    hidden = sorted(gradescope.hidden_cells(ASSIGNMENT))[0]
    note = f"The kernel died in cell {hidden} (it ran out of memory): that cell was skipped."
    points = _points(ASSIGNMENT)
    rows = [CellResult(gradescope.STUDENT, ASSIGNMENT, g, points[g], points[g], Status.PASSED, "")
            for g in graded_cell_ids(ASSIGNMENT) if g != hidden]  # (no row, so no box, for the hidden cell)
    results = _graded(tmp_path, monkeypatch, rows, [note])
    assert note not in results["output"], "a note on a hidden test cell is shown before grades are published"
    boxes = [t for t in results["tests"] if note in t["output"]]
    assert boxes and all(t["visibility"] == gradescope.AFTER_PUBLISHED for t in boxes)
