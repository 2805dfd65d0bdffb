"""The grading command's outputs and its handling of submissions that cannot be graded."""
import csv
import shutil
import subprocess
import sys

from autograde.course import REPO, assignment_ids, graded_cell_ids

FIRST = assignment_ids()[0]


def test_missing_notebook_gets_rows(graded):
    cells = graded_cell_ids(FIRST)
    rows = [graded["scores"][("no-notebook", FIRST, c)] for c in cells]
    assert {r["status"] for r in rows} == {"missing"}
    assert all(float(r["score"]) == 0 for r in rows)
    assert graded["grades"][("no-notebook", FIRST)]["max_score"] == graded["grades"][("reference", FIRST)]["max_score"]


def test_file_that_is_not_a_notebook_gets_error_rows(graded):
    rows = [graded["scores"][("not-a-notebook", FIRST, c)] for c in graded_cell_ids(FIRST)]
    assert {r["status"] for r in rows} == {"error"}
    assert all(float(r["score"]) == 0 and r["message"] for r in rows)


def test_grades_are_the_sum_of_scores(graded):
    for (student, assignment), row in graded["grades"].items():
        cells = [r for k, r in graded["scores"].items() if k[:2] == (student, assignment)]
        assert float(row["score"]) == sum(float(r["score"]) for r in cells)
        assert float(row["max_score"]) == sum(float(r["max_score"]) for r in cells)


def test_scores_csv_columns(graded):
    header = (graded["out"] / "scores.csv").read_text().splitlines()[0]
    assert header == "student_id,assignment,grade_id,score,max_score,status,message"
    assert (graded["out"] / "grades.csv").read_text().splitlines()[0] == "student_id,assignment,score,max_score"


def test_grading_changes_no_source_exercise_or_submission(graded):
    assert graded["inputs_unchanged"], "grading modified solutions/, exercises/ or the submissions"


def test_unknown_assignment_is_a_clear_error(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "autograde", "grade", str(tmp_path), "--out", str(tmp_path / "o"),
                           "--assignment", "99-nope"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 2 and "unknown assignment" in proc.stderr


def test_parallel_grading_equals_sequential(graded, tmp_path):
    # The batch fixture graded with one worker per core; regrade a few of its submissions one at a time.
    mutants = sorted(p.parent.name for p in graded["submissions"].glob(f"mutant--*/{FIRST}"))
    picked = ["reference", "untouched", mutants[0]]
    subset = tmp_path / "subset"
    for student in picked:
        shutil.copytree(graded["submissions"] / student / FIRST, subset / student / FIRST)
    proc = subprocess.run([sys.executable, "-m", "autograde", "grade", str(subset), "--out", str(tmp_path / "out"),
                           "--assignment", FIRST, "--jobs", "1", "--quiet"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "out" / "scores.csv", newline="") as f:
        sequential = list(csv.DictReader(f))
    assert sequential, "the sequential run wrote no rows"
    for row in sequential:
        assert row == graded["scores"][(row["student_id"], row["assignment"], row["grade_id"])]
