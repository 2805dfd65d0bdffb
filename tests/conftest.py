"""Shared fixtures: every synthetic submission graded once, in one batch, by the real command."""
from __future__ import annotations

import csv
import hashlib
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from autograde.course import EXERCISES, REPO, SOLUTIONS, assignment_ids
from autograde.synthetic import completed_notebook, mutant_files, write_reference_class, write_submission

MUTANTS = Path(__file__).parent / "mutants"
ALTERNATIVES = Path(__file__).parent / "alternatives"
CELL_TIMEOUT = 20  # seconds; the slowest reference cell (chapter 2's training) takes under 10
HTML = REPO / "_build" / "html"
JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"


@pytest.fixture(scope="session")
def book():
    """Build the book as `make book` does (strict, cached execution) and return the HTML folder.

    Session-wide: the book tests and the browser tests share one build.
    """
    proc = subprocess.run([str(JUPYTER_BOOK), "build", ".", "-W", "-n", "--keep-going"],
                          cwd=REPO, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, f"the book does not build strictly:\n{proc.stdout[-5000:]}\n{proc.stderr[-5000:]}"
    return HTML


def odd_submissions(assignment: str) -> dict:
    """Submissions of chapter 1 that misbehave in the ways students' notebooks do, by student id."""
    reference = {c.metadata["nbgrader"]["grade_id"]: c for c in completed_notebook(assignment).cells
                 if c.metadata.get("nbgrader", {}).get("solution")}
    dot = reference["dot_scores"].source
    odd = {
        "syntax-error": {"dot_scores": "def dot_scores(queries, keys):\n    return queries @ keys.T +\n"},
        "prints-to-stderr": {"dot_scores": "import sys\nimport warnings\n" + dot.replace(
            "    return", "    print('debugging dot_scores', file=sys.stderr)\n"
                        "    warnings.warn('a harmless warning')\n    return", 1)},
        "infinite-loop": {"cosine_scores": "def cosine_scores(queries, keys):\n    while True:\n        pass\n"},
        "raises": {"gaussian_scores": "raise RuntimeError('my notebook is broken here')\n"},
        "kernel-dies": {"nadaraya_watson": "import os\nos._exit(1)\n"},
        "segfaults-in-a-test": {"cosine_scores": "import ctypes\n\ndef cosine_scores(queries, keys):\n"
                                                 "    return ctypes.string_at(0)\n"},
        "huge-output": {"dot_scores": dot + "\nfor line in range(200_000):\n    print('spam ' * 20)\n"},
        # 6 GiB of address space, past the default 4 GiB limit (np.empty touches no memory, so this is safe anyway).
        "memory-hog": {"weighted_average": "def weighted_average(weights, values):\n"
                                           "    scratch = np.empty(6 * 2**30, dtype=np.uint8)\n"
                                           "    return np.asarray(weights) @ np.asarray(values)\n"},
    }
    return {student: completed_notebook(assignment, cells) for student, cells in odd.items()}


def stealing_cell(solution: Path, markers: list[Path], port: int) -> str:
    """A softmax cell that tries to cheat: run the solution source, write outside its scratch folder, phone home.

    It defines softmax only if it can read `solution`; it tries to create each
    of `markers` and to connect to 127.0.0.1:`port`.
    """
    return f"""import socket
for marker in {[str(m) for m in markers]!r}:
    try:
        with open(marker, "w") as f:
            f.write("written by a submission")
    except OSError:
        pass
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).sendall(b"a submission got out")
except OSError:
    pass
try:
    source = open({str(solution)!r}).read()
except OSError:
    raise NotImplementedError("the solution could not be read")
exec(source, globals())  # the instructor's notebook as a script: every answer, and the tests pass
"""


WRONG_SOFTMAX = "def softmax(x, axis=-1):\n    return np.asarray(x, dtype=float)\n"

# Wrong answers that try to make the tests pass anyway, each in its own way (all replace the softmax cell).
TAMPERING = {
    "patches-numpy": "import builtins\nimport numpy\nnumpy.isclose = lambda a, b, **k: numpy.ones(numpy.broadcast(a, b).shape, bool)\n"
                     "numpy.allclose = lambda *a, **k: True\nnumpy.isnan = lambda a: numpy.zeros(numpy.shape(a), bool)\n"
                     "builtins.AssertionError = type('AssertionError', (Exception,), {})\n" + WRONG_SOFTMAX,
    "patches-while-tested": "def softmax(x, axis=-1):\n    import numpy\n"
                            "    numpy.isclose = lambda a, b, **k: numpy.ones(numpy.broadcast(a, b).shape, bool)\n"
                            "    numpy.allclose = lambda *a, **k: True\n    return numpy.asarray(x, dtype=float)\n",
    "swallows-errors": "import ast\n\nclass NoAsserts(ast.NodeTransformer):\n    def visit_Assert(self, node):\n"
                       "        return ast.Pass()\n\nget_ipython().ast_transformers.append(NoAsserts())\n"
                       "get_ipython().set_custom_exc((BaseException,), lambda *args, **kwargs: None)\n" + WRONG_SOFTMAX,
    "redefines-helpers": "def expect_close(*args, **kwargs):\n    pass\n\ndef expect_shape(*args, **kwargs):\n    pass\n\n"
                         + WRONG_SOFTMAX,
}


def structurally_damaged(assignment: str) -> dict:
    """Correct notebooks of `assignment` whose cells were copied, deleted, edited, moved or stripped, by student id."""
    import copy

    def grade_id(cell):
        return cell.metadata.get("nbgrader", {}).get("grade_id", "")

    def tests(nb):
        return [c for c in nb.cells if grade_id(c).startswith("test_")]

    out = {}
    nb = completed_notebook(assignment)
    first_answer = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("solution"))
    copied = copy.deepcopy(nb.cells[first_answer])
    copied.id = "a-copy"
    nb.cells.insert(first_answer + 1, copied)
    test = tests(nb)[0]
    test_copy = copy.deepcopy(test)
    test_copy.id = "a-test-copy"
    nb.cells.insert(nb.cells.index(test) + 1, test_copy)
    out["copied-cells"] = nb
    nb = completed_notebook(assignment)
    nb.cells = [c for c in nb.cells if c not in tests(nb)[::2]]
    out["deleted-tests"] = nb
    nb = completed_notebook(assignment)
    for cell in tests(nb):
        cell.source = "pass"
    out["edited-tests"] = nb
    nb = completed_notebook(assignment)
    nb.cells = tests(nb) + [c for c in nb.cells if c not in tests(nb)]
    out["tests-moved-to-top"] = nb
    nb = completed_notebook(assignment)
    for cell in nb.cells:
        cell.metadata = {}
    out["no-metadata"] = nb
    return out


def format_damaged(assignment: str) -> dict[str, str]:
    """Correct notebooks of `assignment` as files that break the notebook format, by student id.

    An editor that left outputs on a markdown cell and a string for nbgrader
    metadata (salvaged), and a notebook saved in the old nbformat 3 (converted).
    """
    import json

    nb = completed_notebook(assignment)
    content = json.loads(nbformat.writes(nb))
    markdown = next(c for c in content["cells"] if c["cell_type"] == "markdown")
    markdown["outputs"], markdown["execution_count"] = [], None
    content["cells"][-1]["metadata"]["nbgrader"] = "not a dictionary"
    return {"breaks-the-schema": json.dumps(content), "nbformat-3": nbformat.writes(nbformat.convert(nb, 3), version=3)}


def mutants() -> list[tuple[str, str, Path]]:
    """(assignment, grade_id, path) of every mutant under tests/mutants/<a>/<grade_id>/<name>.py."""
    return mutant_files(MUTANTS)


def alternatives() -> list[tuple[str, str, Path]]:
    """(assignment, grade_id, path) of every correct alternative under tests/alternatives/<a>/<grade_id>/<name>.py."""
    return mutant_files(ALTERNATIVES)


def digest(*folders: Path) -> str:
    """A hash of the names and contents of every file under `folders`."""
    h = hashlib.sha256()
    for folder in folders:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                h.update(str(p).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    """Grade the reference, the untouched notebook, every mutant and alternative and some broken submissions at once.

    Returns ``{"scores": {(student, assignment, grade_id): row}, "grades": {(student, assignment): row},
    "out": Path, "proc": CompletedProcess, "inputs_unchanged": bool, "notes": {(student, assignment): [note]},
    "escaped": {"connected": bool, "written": [path]}}``: whether the stealing submission reached the network or
    wrote any of its marker files.
    """
    base = tmp_path_factory.mktemp("grading")
    submissions, out = base / "submitted", base / "out"
    write_reference_class(submissions, assignment_ids(), MUTANTS, ALTERNATIVES)
    first = assignment_ids()[0]
    (submissions / "no-notebook" / first).mkdir(parents=True)
    broken = submissions / "not-a-notebook" / first / f"{first}.ipynb"
    broken.parent.mkdir(parents=True)
    broken.write_text("this is not JSON")
    for student, nb in odd_submissions(first).items():
        write_submission(nb, submissions, student, first)
    for student, nb in structurally_damaged(first).items():
        write_submission(nb, submissions, student, first)
    for student, text in format_damaged(first).items():
        (submissions / student / first).mkdir(parents=True)
        (submissions / student / first / f"{first}.ipynb").write_text(text)
    stub = "# YOUR CODE HERE\nraise NotImplementedError()"
    write_submission(completed_notebook(first, {"softmax": stub}), submissions, "untouched-softmax-only", first)
    write_submission(completed_notebook(first, {"nadaraya_watson": stub}), submissions, "nadaraya-watson-undone", first)
    write_submission(completed_notebook(first, {"softmax": WRONG_SOFTMAX}), submissions, "wrong-softmax", first)
    for student, cell in TAMPERING.items():
        write_submission(completed_notebook(first, {"softmax": cell}), submissions, student, first)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    markers = [REPO / "written-by-a-submission", submissions / "written-by-a-submission",
               out.parent / "written-by-a-submission", Path(tempfile.gettempdir()) / f"written-by-a-submission-{os.getpid()}"]
    cell = stealing_cell(SOLUTIONS / first / f"{first}.py", markers, listener.getsockname()[1])
    write_submission(completed_notebook(first, {"softmax": cell}), submissions, "steals", first)
    empty = submissions / "empty-file" / first / f"{first}.ipynb"
    empty.parent.mkdir(parents=True)
    empty.write_bytes(b"")

    before = digest(SOLUTIONS, EXERCISES, submissions)
    scratch_before = set(Path(tempfile.gettempdir()).glob("ag-*"))
    proc = subprocess.run(
        [sys.executable, "-m", "autograde", "grade", str(submissions), "--out", str(out), "--quiet",
         "--timeout", str(CELL_TIMEOUT)],
        cwd=REPO, capture_output=True, text=True, timeout=1200,
    )
    assert proc.returncode == 0, f"autograde grade failed:\n{proc.stdout}\n{proc.stderr}"
    with open(out / "scores.csv", newline="") as f:
        scores = {(r["student_id"], r["assignment"], r["grade_id"]): r for r in csv.DictReader(f)}
    with open(out / "grades.csv", newline="") as f:
        grades = {(r["student_id"], r["assignment"]): r for r in csv.DictReader(f)}
    unchanged = digest(SOLUTIONS, EXERCISES, submissions) == before
    try:
        listener.accept()
        connected = True
    except BlockingIOError:
        connected = False
    listener.close()
    written = [str(m) for m in markers if m.exists()]
    left_behind = sorted(str(p) for p in set(Path(tempfile.gettempdir()).glob("ag-*")) - scratch_before)
    with open(out / "notes.csv", newline="") as f:
        notes = {}
        for r in csv.DictReader(f):
            notes.setdefault((r["student_id"], r["assignment"]), []).append(r["note"])
    return {"scores": scores, "grades": grades, "out": out, "proc": proc, "inputs_unchanged": unchanged,
            "submissions": submissions, "notes": notes, "escaped": {"connected": connected, "written": written},
            "scratch_left_behind": left_behind}
