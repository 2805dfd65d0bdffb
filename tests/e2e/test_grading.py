"""The grading command's outputs and its handling of submissions that cannot be graded."""
import csv
import re
import shutil
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

import nbformat
import pytest
from markupsafe import escape  # as the pages' templates escape text

from autograde.course import REPO, SOLUTIONS, assignment_ids, cells_checking, graded_cell_ids, source_notebook
from autograde.pages.outline import outline
from tests.support.commands import run_main
from tests.support.leaks import secret_lines
from tests.support.pages import blocks, table_with
from tests.support.scenarios import kept
from tests.support.submissions import stealing_cell
from tests.support.synthetic import completed_notebook, write_submission

FIRST = assignment_ids()[0]


@pytest.mark.slow
@pytest.mark.sandbox
def test_missing_notebook_gets_rows(graded):
    cells = graded_cell_ids(FIRST)
    rows = [graded["scores"][("no-notebook", FIRST, c)] for c in cells]
    assert {r["status"] for r in rows} == {"missing"}
    assert all(float(r["score"]) == 0 for r in rows)
    assert graded["grades"][("no-notebook", FIRST)]["max_score"] == graded["grades"][("reference", FIRST)]["max_score"]


@pytest.mark.slow
@pytest.mark.sandbox
def test_file_that_is_not_a_notebook_gets_error_rows(graded):
    rows = [graded["scores"][("not-a-notebook", FIRST, c)] for c in graded_cell_ids(FIRST)]
    assert {r["status"] for r in rows} == {"error"}
    assert all("not a notebook" in r["message"] for r in rows)
    assert all(float(r["score"]) == 0 and r["message"] for r in rows)


@pytest.mark.slow
@pytest.mark.sandbox
def test_grades_are_the_sum_of_scores(graded):
    cells = {}
    for key, r in graded["scores"].items():  # (grouped once: the batch has tens of thousands of rows)
        cells.setdefault(key[:2], []).append(r)
    assert graded["grades"] and set(graded["grades"]) == set(cells)
    for key, row in graded["grades"].items():
        assert float(row["score"]) == sum(float(r["score"]) for r in cells[key])
        assert float(row["max_score"]) == sum(float(r["max_score"]) for r in cells[key])


@pytest.mark.slow
@pytest.mark.sandbox
def test_scores_csv_columns(graded):
    header = (graded["out"] / "scores.csv").read_text().splitlines()[0]
    assert header == "student_id,lms_user_id,assignment,grade_id,score,max_score,status,message"
    assert (graded["out"] / "grades.csv").read_text().splitlines()[0] == (
        "student_id,lms_user_id,assignment,score,max_score,raw_score,late_penalty,submitted_at,late_by,time_source")


@pytest.mark.slow
@pytest.mark.sandbox
def test_grading_changes_no_source_exercise_or_submission(graded):
    assert graded["inputs_unchanged"], "grading modified solutions/, exercises/ or the submissions"


def test_unknown_assignment_is_a_clear_error(tmp_path):
    status, _, stderr = run_main("grade", str(tmp_path), "--out", str(tmp_path / "o"), "--assignment", "99-nope")
    assert status == 2 and "unknown assignment" in stderr, (status, stderr)
    assert not (tmp_path / "o").exists(), "an unknown assignment still made the output folder"


@pytest.mark.slow
@pytest.mark.sandbox
def test_parallel_grading_equals_sequential(graded_fresh):
    graded = graded_fresh
    # The batch fixture graded with two worker processes (--jobs 2, whatever the cores); regrade a few of its
    # submissions one at a time. Each worker has its own course folder: both must have graded notebooks, or the
    # batch was not parallel and this compares sequential with sequential.
    busy = [w for w in (graded["out"] / "nbgrader").glob("worker-*") if any(w.glob(f"autograded/*/{FIRST}"))]
    assert len(busy) >= 2, f"the batch was graded by {len(busy)} worker(s), not in parallel"
    sequential = kept("sequential-regrade", __file__, lambda folder: _regrade_one_at_a_time(folder, graded))["rows"]
    assert sequential, "the sequential run wrote no rows"
    for row in sequential:
        assert row == graded["scores"][(row["student_id"], row["assignment"], row["grade_id"])]


def _regrade_one_at_a_time(base: Path, graded) -> dict:
    """A few of the batch `graded`'s submissions graded again with one worker: their scores.csv rows."""
    subset = base / "subset"
    for student in ["reference", "untouched", "wrong-softmax"]:
        shutil.copytree(graded["submissions"] / student / FIRST, subset / student / FIRST)
    proc = subprocess.run([sys.executable, "-m", "autograde", "grade", str(subset), "--out", str(base / "out"),
                           "--assignment", FIRST, "--jobs", "1", "--quiet"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with open(base / "out" / "scores.csv", newline="") as f:
        return {"rows": list(csv.DictReader(f))}


def rows_of(graded, student):
    return {c: graded["scores"][(student, FIRST, c)] for c in graded_cell_ids(FIRST)}


@pytest.mark.slow
@pytest.mark.sandbox
def test_syntax_error_costs_only_what_depends_on_it(graded):
    rows = rows_of(graded, "syntax-error")
    assert rows["test_dot_scores"]["status"] == "error" and "dot_scores" in rows["test_dot_scores"]["message"]
    assert rows["test_softmax_stability"]["status"] == "passed"
    total = float(graded["grades"][("syntax-error", FIRST)]["score"])
    assert 0 < total < float(graded["grades"][("syntax-error", FIRST)]["max_score"])


@pytest.mark.slow
@pytest.mark.sandbox
def test_correct_answer_that_writes_to_stderr_gets_full_marks(graded_fresh):
    graded = graded_fresh
    rows = rows_of(graded, "prints-to-stderr")
    assert {r["status"] for r in rows.values()} == {"passed"}, {c: r["message"] for c, r in rows.items()}
    # Not vacuous: in the graded notebook, test cells of dot_scores did write to stderr (print and warning), which
    # the grader shows as "[stderr] ..." lines.
    executed = list((graded["out"] / "nbgrader").glob(f"worker-*/autograded/prints-to-stderr/{FIRST}/{FIRST}.ipynb"))
    assert len(executed) == 1
    streams = {c.metadata.get("nbgrader", {}).get("grade_id"): "".join(o.get("text", "") for o in c.get("outputs", [])
                                                                        if o.get("output_type") == "stream")
               for c in nbformat.read(executed[0], as_version=4).cells}
    written = [g for g, text in streams.items() if g in rows and "[stderr] debugging dot_scores" in text]
    assert written, "no test cell of the graded notebook wrote to stderr: the test above proves nothing"


@pytest.mark.slow
@pytest.mark.sandbox
def test_infinite_loop_times_out_and_the_rest_is_graded(graded):
    rows = rows_of(graded, "infinite-loop")
    assert rows["test_cosine_scores"]["status"] == "timeout"
    assert "time limit" in rows["test_cosine_scores"]["message"]
    assert float(rows["test_cosine_scores"]["score"]) == 0
    assert rows["test_softmax"]["status"] == rows["test_nadaraya_watson"]["status"] == "passed"


@pytest.mark.slow
@pytest.mark.sandbox
def test_exception_in_a_solution_cell_fails_only_its_tests(graded):
    rows = rows_of(graded, "raises")
    assert rows["test_gaussian_scores"]["status"] == "error"
    assert rows["test_dot_scores"]["status"] == "passed"


@pytest.mark.slow
@pytest.mark.sandbox
def test_empty_file_gets_error_rows_without_stopping_others(graded):
    rows = rows_of(graded, "empty-file")
    assert all(r["status"] == "error" and "empty" in r["message"] for r in rows.values()), rows
    assert float(graded["grades"][("empty-file", FIRST)]["score"]) == 0
    assert float(graded["grades"][("reference", FIRST)]["score"]) == float(graded["grades"][("reference", FIRST)]["max_score"])


@pytest.mark.slow
@pytest.mark.sandbox
def test_feedback_explains_lost_points_without_test_code(graded):
    student = "syntax-error"
    page = (graded["out"] / "feedback" / f"{student}.html").read_text()
    rows = {c: r for (s, a, c), r in graded["scores"].items() if s == student and a == FIRST}
    exercises = outline(source_notebook(FIRST))
    # Every exercise of the notebook, under its own title, in order, with its points.
    headings = [text for tag, _, text in blocks(page, "h3")]
    assert [h.rsplit(" ", 3)[0] for h in headings] == [f"{e.number}. {e.title}" for e in exercises]
    # Every check in words, passed or lost as scores.csv says, with its points and, if lost, its message.
    items = [(css, text) for tag, css, text in blocks(page, "li") if css in ("passed", "lost")]
    checks = [t for e in exercises for t in e.tests]
    assert len(items) == len(checks)
    lost = 0
    for (css, text), check in zip(items, checks, strict=True):
        row = rows[check.grade_id]
        assert text.startswith(check.description), (text, check.description)
        assert f"{float(row['score']):g} / {float(row['max_score']):g})" in text
        assert css == ("passed" if row["status"] == "passed" else "lost"), (check.grade_id, css, row["status"])
        if row["status"] != "passed":
            lost += 1
            said = row["message"].split(": ", 1)[-1]  # the test's words, without the exception's name
            assert len(said.split()) >= 3 and " ".join(said.split()) in text, (row["message"], text)
    assert lost, "the student with a syntax error lost no points: the test proves nothing"
    # The summary sends the student first to the exercise that lost the most points.
    per_exercise = {f"{e.number}. {e.title}": sum(float(rows[t.grade_id]["max_score"]) - float(rows[t.grade_id]["score"])
                                                 for t in e.tests) for e in exercises}
    revisit = [text for tag, _, text in blocks(page, "ol")][0]
    assert revisit.startswith(max(per_exercise, key=per_exercise.get)), revisit
    secrets = [line for a in assignment_ids() for line in secret_lines(a)]
    leaked = [line for line in secrets if escape(line) in page or line in page]
    assert not leaked, leaked[:3]


@pytest.mark.slow
@pytest.mark.sandbox
def test_feedback_shows_the_students_own_line_an_error_came_from(graded):
    page = (graded["out"] / "feedback" / "raises-in-own-code.html").read_text()
    items = [text for tag, css, text in blocks(page, "li") if css == "lost"]
    assert items and all("my own check failed for (" in text for text in items[:2]), items[:2]
    assert ("In your code: cell 'dot_scores', line 3, in dot_scores: "
            "raise ValueError(f'my own check failed for {scores.shape}')") in items[0]
    assert "Traceback" not in page and "site-packages" not in page, "the grader's internals are not the student's"


@pytest.mark.slow
@pytest.mark.sandbox
def test_instructor_report_has_figures_and_pass_rates(graded):
    page = (graded["out"] / "report.html").read_text()
    for assignment in assignment_ids():
        assert f"<h2>{assignment}</h2>" in page
    assert page.count("data:image/svg+xml;base64,") == len(assignment_ids())
    # The status table counts the test cells of each status as scores.csv does; the batch has timeouts (the
    # infinite loop) and crashes, which the report must show. ("timeout" alone is on every page: CSS.) (No
    # tampering: chapter 1's tests run in the checker, where patching the kernel changes nothing.)
    counts = Counter(r["status"] for r in graded["scores"].values())
    assert {"timeout", "crashed", "missing"} <= set(counts)
    shown = {row[0]: int(row[2]) for row in table_with(page, ["status", "meaning", "test cells"])}
    assert shown == dict(counts)


@pytest.mark.slow
@pytest.mark.sandbox
def test_instructor_report_says_how_long_a_notebook_took(graded_fresh):
    # (The fresh batch: a run that reused every result graded no notebook, and says so instead.)
    page = (graded_fresh["out"] / "report.html").read_text()
    assert re.search(r"This run graded \d+ notebooks in \d+ s \(\d+\.\d s per notebook\)", page), "no time per notebook"


@pytest.mark.slow
@pytest.mark.sandbox
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


@pytest.mark.slow
@pytest.mark.sandbox
def test_rerun_reuses_results_and_a_late_submission_is_graded_alone(graded):
    runs = kept("rerun-and-a-late-one", __file__, lambda folder: _grade_three_times(folder, graded))["runs"]
    (first_stdout, first_scores), (again_stdout, again_scores), (late_stdout, late_scores) = runs
    assert "1 graded now, 0 unchanged" in first_stdout
    assert "0 graded now, 1 unchanged" in again_stdout and again_scores == first_scores
    assert "1 graded now, 1 unchanged" in late_stdout
    assert late_scores.startswith(first_scores.rstrip("\n").split("\n")[0])
    assert sum(1 for line in late_scores.splitlines() if line.startswith("late,")) == len(graded_cell_ids(FIRST))


def _grade_three_times(base: Path, graded) -> dict:
    """The batch `graded`'s reference graded, graded again, then again with a late submission beside it: each
    run's output and scores.csv."""
    subset, out = base / "class", base / "out"
    shutil.copytree(graded["submissions"] / "reference" / FIRST, subset / "reference" / FIRST)

    def run():
        proc = subprocess.run([sys.executable, "-m", "autograde", "grade", str(subset), "--out", str(out),
                               "--assignment", FIRST, "--quiet"], cwd=REPO, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout, (out / "scores.csv").read_text()

    runs = [run(), run()]
    shutil.copytree(graded["submissions"] / "untouched" / FIRST, subset / "late" / FIRST)
    return {"runs": [*runs, run()]}


def _grade_on_dask(base: Path, graded) -> dict:
    """A few of the batch `graded`'s submissions and a stealing one, graded by one local Dask cluster of two worker
    processes, with the sandbox and then without (--no-sandbox): by run, the rows, whether the stealing submission
    wrote its marker, and the local worker folders (there must be none)."""
    from distributed import LocalCluster

    with pytest.MonkeyPatch.context() as env:  # (the workers' temporary folder, where they make their courses)
        (base / "dask-workers").mkdir()
        env.setenv("TMPDIR", str(base / "dask-workers"))
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=None)
    found = {}
    with cluster:
        for sandboxed in (True, False):
            run = base / ("sandbox" if sandboxed else "no-sandbox")
            subset, out, marker = run / "class", run / "out", run / "written-by-a-submission"
            for student in ["reference", "untouched", "wrong-softmax"]:
                shutil.copytree(graded["submissions"] / student / FIRST, subset / student / FIRST)
            # The stealing submission tells whether the sandbox was on: without it, it writes its marker and reads
            # the solution (so its softmax tests pass); in it, neither.
            with socket.create_server(("127.0.0.1", 0)) as listener:
                cell = stealing_cell(SOLUTIONS / FIRST / f"{FIRST}.py", [marker], listener.getsockname()[1])
                write_submission(completed_notebook(FIRST, {"softmax": cell}), subset, "steals", FIRST)
                proc = subprocess.run([sys.executable, "-m", "autograde", "grade", str(subset), "--out", str(out),
                                       "--assignment", FIRST, "--scheduler", cluster.scheduler_address, "--quiet",
                                       *([] if sandboxed else ["--no-sandbox"])],
                                      cwd=REPO, capture_output=True, text=True, timeout=600)
            assert proc.returncode == 0, proc.stderr
            with open(out / "scores.csv", newline="") as f:
                found[run.name] = {"rows": list(csv.DictReader(f)), "marker": marker.exists(),
                                   "local_workers": [str(w) for w in (out / "nbgrader").glob("worker-*")]}
    return found


@pytest.fixture(scope="module")
def on_dask(graded):
    """:func:`_grade_on_dask`'s runs (a kept scenario: :mod:`tests.support.scenarios`)."""
    return kept("dask", __file__, lambda folder: _grade_on_dask(folder, graded))


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
def test_grading_on_a_dask_cluster_equals_local_grading(graded, on_dask, sandboxed):
    # The same workers grade with the sandbox, then without (--no-sandbox): each run's options must reach them.
    run = on_dask["sandbox" if sandboxed else "no-sandbox"]
    assert not run["local_workers"], "graded locally, not on the Dask workers"
    rows = run["rows"]
    assert len(rows) == 4 * len(graded_cell_ids(FIRST))
    for row in rows:
        if row["student_id"] != "steals":
            assert row == graded["scores"][(row["student_id"], row["assignment"], row["grade_id"])]
    stole = {r["status"] for r in rows if r["student_id"] == "steals" and r["grade_id"] in cells_checking(
        "softmax", graded_cell_ids(FIRST))}
    if sandboxed:
        assert stole == {"error"} and not run["marker"], "a submission got out of the sandbox on a Dask worker"
    else:
        assert stole == {"passed"} and run["marker"], "--no-sandbox did not reach the Dask workers"


@pytest.mark.slow
@pytest.mark.sandbox
def test_memory_limit_stops_only_the_cell_that_allocates(graded):
    rows = rows_of(graded, "memory-hog")
    assert rows["test_weighted_average"]["status"] == "error"
    assert "MemoryError" in rows["test_weighted_average"]["message"]
    assert rows["test_softmax"]["status"] == rows["test_dot_scores"]["status"] == "passed"


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_failure_of_the_grader_costs_one_submission_and_is_retried_next_run(tmp_path, monkeypatch):
    import importlib

    grading = importlib.import_module("autograde.grade")
    worker = importlib.import_module("autograde.batch.worker")
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
