"""The grading command's outputs and its handling of submissions that cannot be graded."""
import csv
import shutil
import subprocess
import sys

from markupsafe import escape  # as the pages' templates escape text

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
    assert all("not a notebook" in r["message"] for r in rows)
    assert all(float(r["score"]) == 0 and r["message"] for r in rows)


def test_grades_are_the_sum_of_scores(graded):
    for (student, assignment), row in graded["grades"].items():
        cells = [r for k, r in graded["scores"].items() if k[:2] == (student, assignment)]
        assert float(row["score"]) == sum(float(r["score"]) for r in cells)
        assert float(row["max_score"]) == sum(float(r["max_score"]) for r in cells)


def test_scores_csv_columns(graded):
    header = (graded["out"] / "scores.csv").read_text().splitlines()[0]
    assert header == "student_id,lms_user_id,assignment,grade_id,score,max_score,status,message"
    assert (graded["out"] / "grades.csv").read_text().splitlines()[0] == "student_id,lms_user_id,assignment,score,max_score"


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


def rows_of(graded, student):
    return {c: graded["scores"][(student, FIRST, c)] for c in graded_cell_ids(FIRST)}


def test_syntax_error_costs_only_what_depends_on_it(graded):
    rows = rows_of(graded, "syntax-error")
    assert rows["test_dot_scores"]["status"] == "error" and "dot_scores" in rows["test_dot_scores"]["message"]
    assert rows["test_softmax_stability"]["status"] == "passed"
    total = float(graded["grades"][("syntax-error", FIRST)]["score"])
    assert 0 < total < float(graded["grades"][("syntax-error", FIRST)]["max_score"])


def test_correct_answer_that_writes_to_stderr_gets_full_marks(graded):
    rows = rows_of(graded, "prints-to-stderr")
    assert {r["status"] for r in rows.values()} == {"passed"}, {c: r["message"] for c, r in rows.items()}


def test_infinite_loop_times_out_and_the_rest_is_graded(graded):
    rows = rows_of(graded, "infinite-loop")
    assert rows["test_cosine_scores"]["status"] == "timeout"
    assert "time limit" in rows["test_cosine_scores"]["message"]
    assert float(rows["test_cosine_scores"]["score"]) == 0
    assert rows["test_softmax"]["status"] == rows["test_nadaraya_watson"]["status"] == "passed"


def test_exception_in_a_solution_cell_fails_only_its_tests(graded):
    rows = rows_of(graded, "raises")
    assert rows["test_gaussian_scores"]["status"] == "error"
    assert rows["test_dot_scores"]["status"] == "passed"


def test_empty_file_gets_error_rows_without_stopping_others(graded):
    rows = rows_of(graded, "empty-file")
    assert all(r["status"] == "error" and "empty" in r["message"] for r in rows.values()), rows
    assert float(graded["grades"][("empty-file", FIRST)]["score"]) == 0
    assert float(graded["grades"][("reference", FIRST)]["score"]) == float(graded["grades"][("reference", FIRST)]["max_score"])


def test_feedback_explains_lost_points_without_test_code(graded):
    from test_release import secret_lines

    student = "syntax-error"
    page = (graded["out"] / "feedback" / f"{student}.html").read_text()
    lost = [r for (s, a, c), r in graded["scores"].items() if s == student and a == FIRST and r["status"] != "passed"]
    assert lost
    for row in lost:
        assert row["grade_id"] in page and escape(row["message"]) in page
    secrets = [line for a in assignment_ids() for line in secret_lines(a)]
    leaked = [line for line in secrets if escape(line) in page or line in page]
    assert not leaked, leaked[:3]


def test_instructor_report_has_figures_and_pass_rates(graded):
    page = (graded["out"] / "report.html").read_text()
    for assignment in assignment_ids():
        assert f"<h2>{assignment}</h2>" in page
    assert page.count("data:image/png;base64,") == len(assignment_ids())
    assert "timeout" in page and "s per notebook" in page


def test_instructor_report_counts_missing_notebooks_apart(graded):
    page = (graded["out"] / "report.html").read_text()
    sections = page.split("<h2>")[1:]
    for assignment in assignment_ids():
        pairs = {(s, a) for s, a, _ in graded["scores"] if a == assignment}
        handed = {(s, a) for (s, a, _), r in graded["scores"].items() if a == assignment and r["status"] != "missing"}
        missing = pairs - handed
        handed_in = len(pairs) - len(missing)
        section = next(s for s in sections if s.startswith(f"{assignment}</h2>"))
        assert f"{handed_in} notebook{'' if handed_in == 1 else 's'} handed in" in section
        assert (f"{len(missing)} missing, scored 0" if missing else "none missing") in section


def test_rerun_reuses_results_and_a_late_submission_is_graded_alone(graded, tmp_path):
    subset, out = tmp_path / "class", tmp_path / "out"
    shutil.copytree(graded["submissions"] / "reference" / FIRST, subset / "reference" / FIRST)

    def run():
        proc = subprocess.run([sys.executable, "-m", "autograde", "grade", str(subset), "--out", str(out),
                               "--assignment", FIRST, "--quiet"], cwd=REPO, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout, (out / "scores.csv").read_text()

    first_stdout, first_scores = run()
    assert "1 graded now, 0 unchanged" in first_stdout
    again_stdout, again_scores = run()
    assert "0 graded now, 1 unchanged" in again_stdout and again_scores == first_scores
    shutil.copytree(graded["submissions"] / "untouched" / FIRST, subset / "late" / FIRST)
    late_stdout, late_scores = run()
    assert "1 graded now, 1 unchanged" in late_stdout
    assert late_scores.startswith(first_scores.rstrip("\n").split("\n")[0])
    assert sum(1 for line in late_scores.splitlines() if line.startswith("late,")) == len(graded_cell_ids(FIRST))


def test_grading_on_a_dask_cluster_equals_local_grading(graded, tmp_path):
    from distributed import LocalCluster

    subset = tmp_path / "class"
    for student in ("reference", "untouched"):
        shutil.copytree(graded["submissions"] / student / FIRST, subset / student / FIRST)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        proc = subprocess.run([sys.executable, "-m", "autograde", "grade", str(subset), "--out", str(tmp_path / "out"),
                               "--assignment", FIRST, "--scheduler", cluster.scheduler_address, "--quiet"],
                              cwd=REPO, capture_output=True, text=True, timeout=600)
        workers = len(cluster.workers)
    assert proc.returncode == 0, proc.stderr
    assert workers == 2
    with open(tmp_path / "out" / "scores.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * len(graded_cell_ids(FIRST))
    for row in rows:
        assert row == graded["scores"][(row["student_id"], row["assignment"], row["grade_id"])]


def test_memory_limit_stops_only_the_cell_that_allocates(graded):
    rows = rows_of(graded, "memory-hog")
    assert rows["test_weighted_average"]["status"] == "error"
    assert "MemoryError" in rows["test_weighted_average"]["message"]
    assert rows["test_softmax"]["status"] == rows["test_dot_scores"]["status"] == "passed"


def test_a_failure_of_the_grader_costs_one_submission_and_is_retried_next_run(tmp_path, monkeypatch):
    import importlib

    from autograde.synthetic import completed_notebook, write_submission

    grading = importlib.import_module("autograde.grade")
    worker = importlib.import_module("autograde.worker")
    for student in ("alice", "bob"):
        write_submission(completed_notebook(FIRST), tmp_path / "class", student, FIRST)
    genuine = worker._grade_submission

    def fails_on_bob(student, assignment, notebook):
        if student == "bob":
            raise RuntimeError("an unforeseen notebook")
        return genuine(student, assignment, notebook)

    monkeypatch.setattr(worker, "_grade_submission", fails_on_bob)
    rows = grading.grade(tmp_path / "class", tmp_path / "out", [FIRST], progress=False, jobs=1).rows
    by_student = {s: [r for r in rows if r.student_id == s] for s in ("alice", "bob")}
    assert {r.status for r in by_student["alice"]} == {"passed"}
    assert {r.status for r in by_student["bob"]} == {"error"}
    assert all("the grader failed" in r.message and "an unforeseen notebook" in r.message for r in by_student["bob"])

    monkeypatch.setattr(worker, "_grade_submission", genuine)
    result = grading.grade(tmp_path / "class", tmp_path / "out", [FIRST], progress=False, jobs=1)
    assert {r.status for r in result.rows} == {"passed"}
    assert (result.graded, result.reused) == (1, 1)  # bob again, alice's result kept
