"""Submissions that are broken, damaged or hostile: each graded right, none stopping the batch, none escaping.

All of them are chapter 1 notebooks graded through the real command, in the sandbox,
in conftest's `graded` batch (or `graded_fresh`, where a test reads what the run
itself did: the executed notebook, what escaped, the scratch folders left).
"""
import csv
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from autograde.course import REPO, SOLUTIONS, assignment_ids, cells_checking, graded_cell_ids
from autograde.run import sandbox
from tests.support.commands import run_main
from tests.support.scenarios import kept
from tests.support.submissions import TAMPERING, format_damaged, stealing_cell, structurally_damaged
from tests.support.synthetic import completed_notebook, write_submission

FIRST = assignment_ids()[0]


def rows_of(graded, student):
    return {c: graded["scores"][(student, FIRST, c)] for c in graded_cell_ids(FIRST)}


def score(graded, student):
    return float(graded["grades"][(student, FIRST)]["score"])


def softmax_tests():
    return cells_checking("softmax", graded_cell_ids(FIRST))


# Sandbox --------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.sandbox
def test_a_submission_cannot_read_the_solution_write_outside_or_reach_the_network(graded_fresh):
    graded = graded_fresh
    rows = rows_of(graded, "steals")
    for cell in softmax_tests():
        assert rows[cell]["status"] == "error" and float(rows[cell]["score"]) == 0, rows[cell]
    assert score(graded, "steals") == score(graded, "untouched-softmax-only"), "stealing changed the score"
    assert graded["escaped"] == {"connected": False, "written": []}


def _steal_without_the_sandbox(base: Path) -> dict:
    """The stealing submission graded with --no-sandbox: its rows, whether it wrote its marker, what it sent."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0)
    marker = base / "written-by-a-submission"
    cell = stealing_cell(SOLUTIONS / FIRST / f"{FIRST}.py", [marker], listener.getsockname()[1])
    write_submission(completed_notebook(FIRST, {"softmax": cell}), base / "class", "steals", FIRST)
    proc = subprocess.run([sys.executable, "-m", "autograde", "grade", str(base / "class"), "--out",
                           str(base / "out"), "--quiet", "--no-sandbox", "--jobs", "1"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    with open(base / "out" / "scores.csv", newline="") as f:
        rows = {r["grade_id"]: r for r in csv.DictReader(f)}
    try:
        conn, _ = listener.accept()
        sent = conn.recv(100)
        conn.close()
    except BlockingIOError:
        sent = None
    listener.close()
    return {"rows": rows, "marker": marker.exists(), "sent": sent}


@pytest.mark.slow
def test_the_stealing_submission_does_steal_without_the_sandbox():
    # Proves the test above tests the sandbox: without it the same cell reads the solution and scores full marks.
    stole = kept("steals-without-the-sandbox", __file__, _steal_without_the_sandbox)
    rows = stole["rows"]
    assert all(rows[c]["status"] == "passed" for c in softmax_tests()), rows
    assert stole["marker"]
    assert stole["sent"] == b"a submission got out"


@pytest.mark.slow
@pytest.mark.sandbox
def test_every_kernel_scratch_folder_is_removed(graded_fresh):
    graded = graded_fresh
    assert graded["scratch_made"], "no kernel made a scratch folder in the run's own base: the check sees nothing"
    assert graded["scratch_left_behind"] == []


def test_grading_refuses_to_run_without_a_sandbox_unless_told(tmp_path, monkeypatch):
    write_submission(completed_notebook(FIRST), tmp_path / "class", "someone", FIRST)
    # An empty PATH but for Python's folder: bubblewrap cannot be found.
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    status, _, stderr = run_main("grade", str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--quiet")
    assert status == 2, (status, stderr)
    assert "refusing to grade: bubblewrap is not installed" in stderr and "--no-sandbox" in stderr, stderr
    assert not (tmp_path / "out" / "scores.csv").exists()


@pytest.mark.parametrize("isolated", [pytest.param(True, marks=pytest.mark.sandbox), False], ids=["sandbox", "no-sandbox"])
def test_the_launcher_limits_memory_threads_and_file_size(tmp_path, isolated):
    # What a kernel started by the launcher sees, printed to its log; the "-f" argument tells the launcher its
    # scratch folder (which the sandbox cannot write to, so the probe prints).
    probe = ("import os, resource; print(repr(["
             "resource.getrlimit(resource.RLIMIT_AS)[0], resource.getrlimit(resource.RLIMIT_FSIZE)[0], "
             "os.environ.get('OMP_NUM_THREADS'), os.environ.get('OPENBLAS_NUM_THREADS')]))")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "kernel.json").write_text("{}")
    launcher = [sys.executable, str(sandbox.LAUNCHER), "--memory", "1000", "--file-size", "7", "--threads", "2",
                "--processes", "10", "--disk", "16"]
    command = [sys.executable, "-c", probe, "-f", str(scratch / "kernel.json")]
    subprocess.run(launcher + ([] if isolated else ["--no-sandbox"]) + ["--"] + command, check=True, timeout=60)
    assert (scratch / "kernel.log").read_text().splitlines()[-1] == repr([1000 * 2**20, 7 * 2**20, "2", "2"])


@pytest.mark.sandbox
def test_python_under_tmp_stays_visible_in_the_sandbox(tmp_path, monkeypatch):
    # A virtual environment in a checkout under /tmp (as on CI) must not be hidden by the sandbox's own /tmp.
    venv = tmp_path / "checkout" / ".venv"
    venv.mkdir(parents=True)
    (venv / "marker").write_text("here")
    assert str(venv).startswith(tempfile.gettempdir())
    genuine = sandbox.python_dirs()
    monkeypatch.setattr(sandbox, "python_dirs", lambda: [str(venv), *genuine])
    scratch = tmp_path / "scratch"
    sandbox.prepare_scratch(str(scratch))
    command = sandbox.bwrap_command(str(scratch), [sys.executable, "-c", f"print(open({str(venv / 'marker')!r}).read())"])
    assert subprocess.run(command, capture_output=True, text=True, timeout=60).stdout.strip() == "here"


# Tampering ------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("student", sorted(TAMPERING))
def test_tampering_earns_nothing(graded, student):
    # None scores more, on any cell, than the same wrong softmax without the tampering (it may score less: a cell
    # that retries attention_pool with a correct softmax still runs the tampering code first, and is caught).
    rows, honest = rows_of(graded, student), rows_of(graded, "wrong-softmax")
    assert all(float(rows[c]["score"]) == 0 for c in softmax_tests())
    gained = [c for c in rows if float(rows[c]["score"]) > float(honest[c]["score"])]
    assert not gained, f"{student} earns more than the honest wrong softmax on {gained}"
    assert score(graded, "wrong-softmax") < score(graded, "reference")


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("student", ["patches-while-tested", "patches-numpy", "redefines-helpers"])
def test_patching_the_kernel_changes_nothing_for_the_tests(graded, student):
    # Chapter 1's tests run in the checker (issue 30): NumPy, AssertionError or the helpers patched in the kernel,
    # before or during a test, are the student's own business. Each scores, cell by cell, what its wrong softmax
    # is worth, with the same verdicts, and gets no note.
    rows, honest = rows_of(graded, student), rows_of(graded, "wrong-softmax")
    assert {c: (rows[c]["score"], rows[c]["status"]) for c in softmax_tests()} == \
        {c: (honest[c]["score"], honest[c]["status"]) for c in softmax_tests()}
    assert not graded["notes"].get((student, FIRST)), graded["notes"].get((student, FIRST))


@pytest.mark.slow
@pytest.mark.sandbox
def test_correct_notebooks_are_never_flagged(graded):
    flagged = {key: notes for key, notes in graded["notes"].items() if key[0] in ("reference", "untouched")}
    assert flagged == {}


# Damaged structure ----------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("student", sorted(structurally_damaged(FIRST)))
def test_damaged_structure_costs_nothing(graded, student):
    rows = rows_of(graded, student)
    assert {r["status"] for r in rows.values()} == {"passed"}, {c: r["message"] for c, r in rows.items()}


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("student", sorted(format_damaged(FIRST)))
def test_a_file_that_breaks_the_notebook_format_is_salvaged(graded, student):
    rows = rows_of(graded, student)
    assert {r["status"] for r in rows.values()} == {"passed"}, {c: r["message"] for c, r in rows.items()}


@pytest.mark.slow
@pytest.mark.sandbox
def test_salvage_is_noted(graded):
    assert any("did not follow the notebook format" in n for n in graded["notes"][("breaks-the-schema", FIRST)])


@pytest.mark.slow
@pytest.mark.sandbox
def test_repairs_are_noted(graded):
    assert any("a copy of your answer cell" in n for n in graded["notes"][("copied-cells", FIRST)])
    assert any("were missing from your notebook; the originals were put back" in n for n in graded["notes"][("deleted-tests", FIRST)])
    assert any("had lost their nbgrader labels" in n for n in graded["notes"][("no-metadata", FIRST)])
    page = (graded["out"] / "feedback" / "copied-cells.html").read_text()
    assert "About your notebook" in page and "a copy of your answer cell" in page


# Crashes and floods ---------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.sandbox
def test_a_kernel_killed_by_an_answer_cell_costs_only_that_answer(graded):
    # It scores what leaving that one answer undone scores: every other cell is graded in a fresh kernel.
    rows, undone = rows_of(graded, "kernel-dies"), rows_of(graded, "nadaraya-watson-undone")
    assert {c: r["score"] for c, r in rows.items()} == {c: r["score"] for c, r in undone.items()}
    assert all(rows[c]["status"] != "passed" for c in cells_checking("nadaraya_watson", graded_cell_ids(FIRST)))
    assert score(graded, "kernel-dies") > score(graded, "untouched")
    assert any("kernel died in cell nadaraya_watson" in n for n in graded["notes"][("kernel-dies", FIRST)])


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_segfault_inside_a_test_fails_that_test_and_the_rest_is_graded(graded):
    rows = rows_of(graded, "segfaults-in-a-test")
    lost = cells_checking("cosine_scores", graded_cell_ids(FIRST))
    assert rows[lost[0]]["status"] == "crashed" and "kernel died" in rows[lost[0]]["message"]
    assert all(float(rows[c]["score"]) == 0 for c in lost)
    assert all(r["status"] == "passed" for c, r in rows.items() if c not in lost), rows


@pytest.mark.slow
@pytest.mark.sandbox
def test_huge_output_is_cut_and_costs_nothing(graded_fresh):
    graded = graded_fresh
    rows = rows_of(graded, "huge-output")
    assert {r["status"] for r in rows.values()} == {"passed"}
    assert any("cut short" in n for n in graded["notes"][("huge-output", FIRST)])
    executed = list((graded["out"] / "nbgrader").glob(f"worker-*/autograded/huge-output/{FIRST}/{FIRST}.ipynb"))
    assert len(executed) == 1 and executed[0].stat().st_size < 2_000_000
    nbformat.read(executed[0], as_version=4)  # still a valid notebook
