"""The Gradescope autograder (issue 24): ``python -m autograde gradescope <a>`` writes the zip, whose run grades one
submission with the grade command and writes results.json.

The zip is made by the real command (:func:`tests.support.commands.run_main`). The end-to-end tests lay Gradescope's
folders out in a temporary folder (``source/`` the zip's contents, ``submission/``, ``submission_metadata.json``,
``results/``), run the generated ``run_autograder`` there with bash, this venv's Python standing in for setup.sh's
(``AUTOGRADE_GRADESCOPE_PYTHON``), and read ``results/results.json``. Each graded case grades one chapter-1 notebook.
"""
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograde.course import source_notebook
from autograde.gradescope import PYTHON_ENV, ROOT_ENV, due_date, notebooks_in
from autograde.results.classify import graded_cells
from tests.support.commands import run_main
from tests.support.integrity import FIRST, disguised_leaks, disguised_submissions
from tests.support.synthetic import completed_notebook

A = "01-weighted-sum"
PENALTY = "10%/day"
CELLS = dict(graded_cells(A))  # grade id -> points
# Gradescope's own format (its autograder documentation): times in ISO 8601 with an offset.
DUE = "2026-03-01T23:59:00.000000-08:00"
ON_TIME = "2026-03-01T20:00:00.000000-08:00"
WRONG_DOT = """def dot_scores(queries, keys):
    return np.asarray(keys, dtype=float) @ np.asarray(queries, dtype=float).T
"""
NAN_SOFTMAX = """def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
"""


def hidden_in_source() -> set[str]:
    """The test cells whose source (solutions/<a>/<a>.py) has a hidden-tests block: read here, not by the grader."""
    return {c.metadata["nbgrader"]["grade_id"] for c in source_notebook(A).cells
            if c.metadata.get("nbgrader", {}).get("grade") and "### BEGIN HIDDEN TESTS" in c.source}


def metadata(created_at: str = ON_TIME, due: str | None = DUE, own_due: str | None = None) -> dict:
    """A submission_metadata.json as Gradescope writes it (the fields its documentation lists)."""
    user = {"email": "student@example.com", "id": 1234, "name": "Student User", "sid": None}
    if own_due is not None:
        user["assignment"] = {"release_date": "2026-02-01T00:00:00.000000-08:00", "due_date": own_due,
                              "late_due_date": None}
    return {"id": 123456, "created_at": created_at, "submission_method": "upload", "users": [user],
            "assignment": {"id": 25828, "course_id": 1234, "title": "01 Weighted sum", "due_date": due,
                           "late_due_date": None, "release_date": "2026-02-01T00:00:00.000000-08:00",
                           "group_submission": False, "group_size": None, "total_points": "23.0"},
            "previous_submissions": []}


def build_zip(path: Path, *options: str) -> Path:
    status, out, err = run_main("gradescope", A, "--out", str(path), *options)
    assert status == 0, f"python -m autograde gradescope failed ({status}):\n{out}\n{err}"
    return path


@pytest.fixture(scope="session")
def autograder_zip(tmp_path_factory) -> Path:
    """The autograder zip of chapter 1 with a late penalty of 10%/day, as the command writes it."""
    return build_zip(tmp_path_factory.mktemp("gradescope") / "autograder.zip", "--late-penalty", PENALTY)


def lay_out(zip_path: Path, root: Path, submission: dict[str, str | bytes], meta: dict | None) -> Path:
    """Gradescope's folders in `root`: the zip in source/ (and its run_autograder beside it), `submission` files
    (name -> content) in submission/, `meta` as submission_metadata.json; returns `root`."""
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(root / "source")
    (root / "run_autograder").write_bytes((root / "source" / "run_autograder").read_bytes())
    (root / "submission").mkdir()
    for name, content in submission.items():
        path = root / "submission" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    if meta is not None:
        (root / "submission_metadata.json").write_text(json.dumps(meta))
    return root


def run_in(root: Path) -> tuple[dict, str]:
    """Run `root`/run_autograder as Gradescope does (from `root`, with bash), with this venv's Python; (results.json,
    the run's stdout and stderr)."""
    env = {**os.environ, ROOT_ENV: str(root), PYTHON_ENV: sys.executable}
    done = subprocess.run(["bash", str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True,
                          timeout=600)
    log = done.stdout + done.stderr
    results = root / "results" / "results.json"
    assert results.is_file(), f"run_autograder wrote no results.json (exit {done.returncode}):\n{log}"
    return json.loads(results.read_text()), log


def run_autograder(zip_path: Path, root: Path, submission: dict[str, str | bytes], meta: dict | None) -> tuple[dict, str]:
    """:func:`lay_out`, then :func:`run_in`."""
    return run_in(lay_out(zip_path, root, submission, meta))


def by_grade_id(results: dict) -> dict[str, dict]:
    return {t["extra_data"]["grade_id"]: t for t in results["tests"]}


# ------------------------------------------------------------------------------------------------- fast


def test_gradescope_zip_holds_the_grader_and_only_this_assignment(tmp_path):
    path = build_zip(tmp_path / "autograder.zip")
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in archive.infolist()}
        config = json.loads(archive.read("gradescope.json"))
        setup = archive.read("setup.sh").decode()
        run = archive.read("run_autograder").decode()
    for needed in ("setup.sh", "run_autograder", "requirements.txt", "autograde/__main__.py", "autograde/grade.py",
                   "autograde/nbgrader_config.py", "autograde/run/sandbox.py", "autograde/run/checker.py",
                   "autograde/run/agent.py",
                   "autograde/pages/templates/feedback.html.j2", f"solutions/{A}/{A}.py", f"exercises/{A}/{A}.ipynb"):
        assert needed in names, f"the autograder zip lacks {needed}"
    others = [n for n in names if n.startswith(("solutions/", "exercises/")) and f"/{A}/" not in n]
    assert not others, f"the zip holds other assignments' files, which grading {A} does not need: {others}"
    stray = [n for n in names if n.split("/")[0] not in ("autograde", "solutions", "exercises")
             and n not in ("setup.sh", "run_autograder", "requirements.txt", "gradescope.json")]
    assert not stray, f"the zip holds files grading does not need: {stray}"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")], "compiled files in the zip"
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111, "setup.sh and run_autograder must be executable"
    assert config == {"assignment": A, "late_penalty": None}, config
    assert run.startswith("#!") and ROOT_ENV in run and "autograde.gradescope" in run, run
    assert "bubblewrap" in setup and "python3.11" in setup and "requirements.txt" in setup, setup
    assert build_zip(tmp_path / "again.zip").read_bytes() == path.read_bytes(), "the same sources gave another zip"
    # bash can parse both scripts
    for script in ("setup.sh", "run_autograder"):
        (tmp_path / script).write_text(setup if script == "setup.sh" else run)
        check = subprocess.run(["bash", "-n", str(tmp_path / script)], capture_output=True, text=True)
        assert check.returncode == 0, f"{script} is not valid bash: {check.stderr}"


def test_gradescope_command_refuses_an_unknown_assignment(tmp_path):
    status, _, err = run_main("gradescope", "99-nothing", "--out", str(tmp_path / "a.zip"))
    assert status == 2 and "unknown assignment" in err, (status, err)
    assert not (tmp_path / "a.zip").exists()


def test_due_date_is_the_students_own_where_gradescope_lists_one():
    assert due_date(metadata()) == (DUE, "the assignment's due date")
    extended = "2026-03-04T23:59:00.000000-08:00"
    assert due_date(metadata(own_due=extended)) == (extended, "the student's own due date")
    group = metadata(own_due=extended)
    group["users"].append({"id": 2, "name": "Other", "email": "", "assignment": {"due_date": DUE}})
    assert due_date(group)[0] == extended, "a group's latest own due date counts"
    assert due_date(metadata(due=None)) == (None, "no due date")
    odd = metadata(own_due=extended)
    odd["users"].append({"id": 3, "assignment": {"due_date": "2026-03-09T23:59:00"}})  # no offset: not compared
    odd["users"].append({"id": 4, "assignment": {"due_date": "next Tuesday"}})
    assert due_date(odd)[0] == extended, "a due date without an offset, or not a date, is left out"
    assert due_date({}) == (None, "no due date")
    # The assignment's own due date without an offset would make the grade command refuse every run: left out.
    assert due_date(metadata(due="2026-03-01T23:59:00"))[0] is None


def test_a_run_takes_its_due_date_and_extensions_from_gradescope_not_the_local_config(tmp_path, monkeypatch):
    # The zip carries the instructor's nbgrader_config.py: a due date or an extensions file set there for LMS
    # grading must not reach a Gradescope run (the file is not in the zip; the date may be another assignment's).
    import autograde.gradescope as gs

    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "work.ipynb").write_text("{}")
    commands = []

    def fake_run(command, **kwargs):
        commands.append(command)
        return subprocess.CompletedProcess(command, 1, "", "")

    monkeypatch.setattr(gs.subprocess, "run", fake_run)
    for meta, due in ((metadata(), DUE), (metadata(due=None), None)):
        (tmp_path / "submission_metadata.json").write_text(json.dumps(meta))
        gs.grade_one(tmp_path, {"assignment": A, "late_penalty": "10%/day"}, lambda text: None)
        command = commands[-1]
        assert "--LatePolicy.extensions=" in command, command
        if due is None:
            assert "--LatePolicy.due=" in command and "--due" not in command, command
        else:
            assert command[command.index("--due") + 1] == due, command


def test_a_bad_late_penalty_is_refused_when_the_zip_is_built(tmp_path):
    from autograde.gradescope import build

    with pytest.raises(ValueError, match="10%/day"):
        build(A, tmp_path / "autograder.zip", "10 percent")
    assert not (tmp_path / "autograder.zip").exists()


def test_notebooks_in_a_submission_leave_out_checkpoints_and_archivers_leftovers(tmp_path):
    for name in ("work.ipynb", "sub/other.ipynb", ".ipynb_checkpoints/work-checkpoint.ipynb", "__MACOSX/._work.ipynb",
                 "._work.ipynb", "notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    assert [p.relative_to(tmp_path).as_posix() for p in notebooks_in(tmp_path)] == ["sub/other.ipynb", "work.ipynb"]


# ------------------------------------------------------------------------------------------------- end to end


@pytest.fixture(scope="session")
def correct_run(autograder_zip, tmp_path_factory):
    notebook = nbformat.writes(completed_notebook(A))
    return run_autograder(autograder_zip, tmp_path_factory.mktemp("gs-correct"), {"My Work (2).ipynb": notebook},
                          metadata())


@pytest.mark.slow
@pytest.mark.sandbox
def test_gradescope_correct_submission_gets_full_marks(correct_run):
    results, log = correct_run
    tests = by_grade_id(results)
    assert list(tests) == list(CELLS), f"results.json's tests are not the test cells, in order: {list(tests)}"
    for grade_id, points in CELLS.items():
        test = tests[grade_id]
        assert (test["score"], test["max_score"]) == (points, points), f"{grade_id}: {test}"
        assert test["status"] == "passed" and grade_id in test["name"], test
    assert results["score"] == sum(CELLS.values()), f"top-level score {results['score']}, not {sum(CELLS.values())}"
    assert "/source/autograde" in log.splitlines()[0], f"the run did not use the zip's grader:\n{log[:500]}"
    assert "$ " in log and " grade " in log, f"the run did not call the grade command:\n{log}"


@pytest.mark.slow
@pytest.mark.sandbox
def test_gradescope_hidden_tests_are_shown_after_publishing(correct_run):
    results, _ = correct_run
    hidden = hidden_in_source()
    assert hidden and set(CELLS) - hidden, "chapter 1 has both visible-only and hidden test cells"
    for grade_id, test in by_grade_id(results).items():
        expected = "after_published" if grade_id in hidden else "visible"
        assert test["visibility"] == expected, f"{grade_id} holds hidden tests: {grade_id in hidden}, but is {test['visibility']}"
    assert results["stdout_visibility"] == "hidden", "the grader's log is for the instructor"


@pytest.mark.slow
@pytest.mark.sandbox
def test_gradescope_wrong_submission_loses_exactly_the_right_tests(autograder_zip, tmp_path):
    notebook = nbformat.writes(completed_notebook(A, {"dot_scores": WRONG_DOT, "softmax": NAN_SOFTMAX}))
    results, log = run_autograder(autograder_zip, tmp_path, {f"{A}.ipynb": notebook}, metadata())
    tests = by_grade_id(results)
    lost = {g for g, t in tests.items() if t["score"] < t["max_score"]}
    assert lost == {"test_dot_scores", "test_dot_scores_oracle", "test_softmax_masking"}, f"lost {lost}:\n{log}"
    assert all(tests[g]["score"] == 0 and tests[g]["status"] == "failed" for g in lost)
    assert results["score"] == sum(CELLS.values()) - 3
    # The messages teach: what was checked and what was wrong, not just an exception's name.
    assert "dot_scores(queries (2, 2), keys (3, 2))" in tests["test_dot_scores"]["output"], tests["test_dot_scores"]
    assert "nan" in tests["test_softmax_masking"]["output"], tests["test_softmax_masking"]
    for grade_id in lost:
        assert "A check found a mistake" in tests[grade_id]["output"], tests[grade_id]
        assert "### BEGIN HIDDEN" not in tests[grade_id]["output"] and "expect_close(" not in tests[grade_id]["output"]


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("files, words", [
    ({}, ["No notebook", f"{A}.ipynb"]),
    ({"notes.txt": "my answers are in my head"}, ["No notebook"]),
    ({"a.ipynb": "{}", "sub/b.ipynb": "{}"}, ["2 notebooks", "a.ipynb", "sub/b.ipynb", f"only your completed {A}.ipynb"]),
], ids=["nothing", "no-notebook", "two-notebooks"])
def test_gradescope_no_notebook_or_several_say_so(autograder_zip, tmp_path, files, words):
    results, log = run_autograder(autograder_zip, tmp_path, files, metadata())
    assert results["score"] == 0 and results["tests"] == [], results
    for word in words:
        assert word in results["output"], f"{word!r} not in {results['output']!r}"
    assert " grade " not in log, f"nothing should have been graded:\n{log}"


@pytest.mark.slow
@pytest.mark.sandbox
def test_gradescope_broken_notebook_gets_a_clear_result(autograder_zip, tmp_path):
    results, log = run_autograder(autograder_zip, tmp_path, {f"{A}.ipynb": "this is not JSON {"}, None)
    assert results["score"] == 0, results
    assert len(results["tests"]) == len(CELLS) and all(t["score"] == 0 for t in results["tests"]), results["tests"]
    assert "could not be graded" in results["output"] and "notebook" in results["output"].lower(), results["output"]
    assert "Traceback" not in results["output"] + json.dumps(results["tests"]), results
    assert all("could not be graded" in t["output"] for t in results["tests"]), results["tests"][0]


@pytest.mark.slow
@pytest.mark.sandbox
def test_gradescope_grader_failure_is_said_not_crashed(autograder_zip, tmp_path):
    # A source folder without its gradescope.json: the run fails before grading, and still writes results.json.
    root = lay_out(autograder_zip, tmp_path, {f"{A}.ipynb": "{}"}, metadata())
    (root / "source" / "gradescope.json").unlink()
    results, log = run_in(root)
    assert results["score"] == 0 and "not a grade of your work" in results["output"], results
    assert "Traceback" in log and "gradescope.json" in log, log
    assert "Traceback" not in results["output"]


@pytest.mark.slow
@pytest.mark.sandbox
def test_gradescope_grade_command_failing_is_said_not_graded(autograder_zip, tmp_path):
    # The grade command itself fails (here: settings that raise): no grade of the student's work, and the instructor
    # sees why in the log.
    root = lay_out(autograder_zip, tmp_path, {f"{A}.ipynb": nbformat.writes(completed_notebook(A))}, metadata())
    settings = root / "source" / "autograde" / "nbgrader_config.py"
    settings.write_text(settings.read_text() + "\nraise RuntimeError('settings broken on purpose')\n")
    results, log = run_in(root)
    assert results["score"] == 0 and results["tests"] == [], results
    assert "could not run" in results["output"] and "not a grade of your work" in results["output"], results
    assert "settings broken on purpose" in log, log


@pytest.mark.slow
@pytest.mark.sandbox
def test_gradescope_late_submission_loses_the_penalty_from_the_students_own_due_date(autograder_zip, tmp_path):
    # Three days past the assignment's due date, one day past the student's extension: 10% off, not 30%.
    own_due = "2026-03-03T23:59:00.000000-08:00"
    meta = metadata(created_at="2026-03-04T23:59:00.000000-08:00", due=DUE, own_due=own_due)
    notebook = nbformat.writes(completed_notebook(A))
    results, log = run_autograder(autograder_zip, tmp_path, {f"{A}.ipynb": notebook}, meta)
    total = sum(CELLS.values())
    assert sum(t["score"] for t in results["tests"]) == total, "the tests keep their raw points"
    assert results["score"] == pytest.approx(total * 0.9), f"score {results['score']}, not {total * 0.9}:\n{log}"
    assert "Late penalty" in results["output"] and f"{total * 0.1:g}" in results["output"], results["output"]
    assert f"--due {own_due}" in log and f"--late-penalty {PENALTY}" in log, log


@pytest.mark.slow
@pytest.mark.sandbox
def test_gradescope_results_spell_no_hidden_test_however_a_submission_disguises_what_it_reads(autograder_zip, tmp_path):
    # The submission that reads the running cell back in disguise (reversed, capitals, look-alike letters, a dying
    # kernel's last words) through Gradescope: nothing in results.json, hidden tests' boxes included, spells a
    # hidden-test line once a disguise is undone. (The tests run in the checker: the kernel has none to read.)
    submission = nbformat.writes(disguised_submissions()["reads-back-disguised"])
    results, log = run_autograder(autograder_zip, tmp_path, {f"{FIRST}.ipynb": submission}, metadata())
    assert results["tests"], f"nothing was graded:\n{log}"
    assert results["score"] < sum(CELLS.values()), "the disguised submission's wrong answers kept every point"
    shown = "\n".join(strings_in(results))
    assert "not done" in shown, "the submission's own message is not in results.json: the check read nothing"
    assert not disguised_leaks(shown), "results.json spells a hidden-test line"


def strings_in(value) -> list[str]:
    """Every string in a JSON value (keys and values), as a reader of it sees them."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in strings_in(k) + strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return []
