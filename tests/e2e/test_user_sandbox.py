"""The sandbox where bubblewrap cannot run (issue 30, Gradescope): each kernel as an unprivileged user of its own.

Run for real on this machine, as root: the grading command with ``--sandbox-user``
on chapter 1, from a copy of the repository in a folder closed to other users,
with a Python that other users can run (the grader's own lies under /root, which
they cannot enter; Gradescope's setup.sh puts its venv in /opt). A submission
that pries records what it could reach; the reference earns every point.
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from autograde.course import assignment_ids
from autograde.run import sandbox
from tests.support.commands import repo_copy
from tests.support.synthetic import completed_notebook, write_submission

FIRST = assignment_ids()[0]
# A Python 3.11 outside /root (the grader's own, under /root/.pyenv here, is closed to other users).
BASE_PYTHONS = ("/usr/bin/python3.11", "/usr/local/bin/python3.11")
PRY = '''import json, os, socket
_found = {"uid": os.getuid(), "interfaces": sorted(n for _, n in socket.if_nameindex())}
for _what, _path in {PATHS}.items():
    try:
        os.listdir(_path) if os.path.isdir(_path) else open(_path, "rb").close()
        _found[_what] = "read"
    except OSError as _e:
        _found[_what] = type(_e).__name__
print("PRIED", json.dumps(_found))
'''


def _readable_python(folder: Path) -> Path:
    """A venv other users can run: a Python 3.11 outside /root, with this venv's packages (same minor version)."""
    base = next((p for p in BASE_PYTHONS if os.path.isfile(p)), None)
    if base is None or os.geteuid() != 0:
        pytest.skip("needs root and a Python 3.11 outside /root (e.g. Debian's python3.11) to run a kernel as "
                    "another user")
    subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True)
    site = next(Path(p) for p in __import__("site").getsitepackages() if p.endswith("site-packages"))
    (folder / "lib" / "python3.11" / "site-packages" / "course.pth").write_text(
        f"import site; site.addsitedir({str(site)!r})\n")
    return folder / "bin" / "python"


@pytest.fixture(scope="module")
def readable_python():
    """A Python other users can run (in a folder readable by all), removed after the module's tests."""
    opened = Path(tempfile.mkdtemp(prefix="ag-user-python-"))
    try:
        opened.chmod(0o755)
        yield _readable_python(opened / "venv")
    finally:
        shutil.rmtree(opened, ignore_errors=True)


@pytest.fixture(scope="module")
def user_mode(readable_python):
    """Chapter 1 graded with --sandbox-user: the reference and a prying submission, from a closed repository copy."""
    closed = Path(tempfile.mkdtemp(prefix="ag-user-grader-"))  # the grader's files: root's alone (0700)
    try:
        python = readable_python
        repo = repo_copy(closed / "repo")
        secret = repo / "solutions" / FIRST / f"{FIRST}.py"
        out = closed / "out"
        paths = {"solutions": str(secret), "out": str(out), "submissions": str(closed / "class"),
                 "root": "/root"}
        write_submission(completed_notebook(FIRST), closed / "class", "reference", FIRST)
        pry = PRY.replace("{PATHS}", repr(paths))
        prying = completed_notebook(FIRST)
        answer = next(c for c in prying.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "softmax")
        answer.source = pry + "\n" + answer.source
        write_submission(prying, closed / "class", "prying", FIRST)
        done = subprocess.run([str(python), "-m", "autograde", "grade", str(closed / "class"), "--out", str(out),
                               "--quiet", "--jobs", "1", "--sandbox-user"], cwd=repo, capture_output=True,
                              text=True, timeout=900)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        with open(out / "scores.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        executed = next(out.glob(f"nbgrader/worker-*/autograded/prying/{FIRST}/{FIRST}.ipynb"))
        printed = "".join(o.get("text", "") for c in nbformat.read(executed, as_version=4).cells
                          for o in c.get("outputs", []) if o.get("output_type") == "stream")
        line = next((li for li in printed.splitlines() if li.startswith("PRIED ")), None)
        assert line is not None, f"the prying cell printed nothing: {printed[:500]}"
        yield {"rows": rows, "pried": json.loads(line[len("PRIED "):]), "repo": repo}
    finally:
        shutil.rmtree(closed, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.sandbox
def test_as_a_user_of_its_own_a_kernel_grades_a_correct_notebook_in_full(user_mode):
    mine = [r for r in user_mode["rows"] if r["student_id"] in ("reference", "prying")]
    lost = [(r["student_id"], r["grade_id"], r["message"]) for r in mine if float(r["score"]) < float(r["max_score"])]
    assert mine and not lost, lost


@pytest.mark.slow
@pytest.mark.sandbox
def test_as_a_user_of_its_own_a_kernel_reads_none_of_the_graders_files(user_mode):
    pried = user_mode["pried"]
    assert pried["uid"] >= sandbox.SANDBOX_UID_BASE, f"the kernel ran as user {pried['uid']}, not one of its own"
    reached = {what: how for what, how in pried.items() if how == "read"}
    assert not reached, f"student code read the grader's files: {reached}"
    assert pried["solutions"] == "PermissionError", pried  # (it exists: refused, not missing)


@pytest.mark.slow
@pytest.mark.sandbox
def test_as_a_user_of_its_own_a_kernel_has_no_network_where_root_may_make_a_namespace(user_mode):
    # This machine lets root make a network namespace (Docker's default profile does not: the README says so).
    assert user_mode["pried"]["interfaces"] == ["lo"], user_mode["pried"]


CHECK = ("import json, sys; from pathlib import Path; from autograde.run.sandbox import check_user_sandbox; "
         "print(json.dumps(check_user_sandbox({'the repository': Path(sys.argv[1])})[0]))")


@pytest.mark.slow
@pytest.mark.sandbox
def test_grading_as_users_refuses_a_repository_other_users_can_read(readable_python, tmp_path):
    def problem(path: Path) -> str | None:
        done = subprocess.run([str(readable_python), "-c", CHECK, str(path)], cwd=sandbox.LAUNCHER.parents[2],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    said = problem(Path("/usr/share"))
    assert said is not None and "/usr/share (the repository)" in said and "chmod 700" in said, said
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    assert problem(closed) is None


def test_a_python_other_users_cannot_run_is_refused_in_words():
    # The grader's own Python here lies under /root, closed to other users: the check says so, not a traceback.
    if os.geteuid() != 0 or not os.path.realpath(sys.executable).startswith("/root/") or \
            os.stat("/root").st_mode & 0o001:
        pytest.skip("needs root, and this Python under a /root closed to other users (as on CI)")
    said, _ = sandbox.check_user_sandbox({})
    assert said is not None and "cannot be run by an unprivileged user" in said and "Permission denied" in said, said


@pytest.mark.slow
@pytest.mark.sandbox
def test_on_gradescope_without_bubblewrap_each_kernel_runs_as_a_user_of_its_own(readable_python, tmp_path):
    # Docker's default seccomp profile stops bubblewrap there; here, a PATH without bwrap stands in for it. The
    # autograder's folders start readable by all, as an image may leave them: the run closes them first.
    from autograde.gradescope import PYTHON_ENV, ROOT_ENV
    from tests.e2e.test_gradescope import CELLS, build_zip, by_grade_id, lay_out, metadata

    opened = Path(tempfile.mkdtemp(prefix="ag-gradescope-"))
    try:
        opened.chmod(0o755)
        root = lay_out(build_zip(tmp_path / "autograder.zip"), opened / "autograder",
                       {"work.ipynb": nbformat.writes(completed_notebook(FIRST))}, metadata())
        for path in [root, *root.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        env = {**os.environ, ROOT_ENV: str(root), PYTHON_ENV: str(readable_python), "PATH": "/nonexistent"}
        done = subprocess.run(["/bin/bash", str(root / "run_autograder")], cwd=root, env=env, capture_output=True,
                              text=True, timeout=900)
        log = done.stdout + done.stderr
        results = json.loads((root / "results" / "results.json").read_text())
        assert "each kernel runs as an unprivileged user of its own" in log, log[-3000:]
        assert "--sandbox-user" in log, log[-3000:]
        tests = by_grade_id(results)
        lost = {g: t["output"] for g, t in tests.items() if t["score"] < CELLS[g]}
        assert results["score"] == sum(CELLS.values()) and not lost, (results["score"], lost, log[-3000:])
        closed = {f: oct((root / f).stat().st_mode & 0o777) for f in ("source", "submission", "results")}
        assert set(closed.values()) == {"0o700"}, closed
    finally:
        shutil.rmtree(opened, ignore_errors=True)
