"""Submissions of chapter 1 that misbehave as students' notebooks do, and where the mutants and alternatives are.

Generators only: the batches of tests/support/batches.py grade what they
make, and the tests in test_hostile.py read the results by student id.
"""
from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import nbformat

from tests.support.synthetic import completed_notebook, mutant_files

TESTS = Path(__file__).resolve().parent.parent
MUTANTS = TESTS / "mutants"
ALTERNATIVES = TESTS / "alternatives"


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
        "raises-in-own-code": {"dot_scores": "def dot_scores(queries, keys):\n    scores = queries @ keys.T\n"
                                             "    raise ValueError(f'my own check failed for {scores.shape}')\n"},
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


def alternative_groups(assignment: str) -> dict[str, dict[str, Path]]:
    """The notebooks chapter `assignment`'s correct alternatives are graded in through the real command: notebook
    ``alternatives-<k>`` holds the k-th alternative (in name order) of every answer cell that has one, the reference
    in the others; by student id, ``{grade_id: path}``.

    One notebook per k, not per alternative: every notebook of a training chapter trains again, and by the course's
    fairness rule no test calls the student's answer to another exercise, so an alternative's cells are scored on
    its own code. (test_mutants.py holds every chapter to that rule.)
    """
    groups: dict[str, dict[str, Path]] = {}
    for grade_id in sorted({g for a, g, _ in alternatives() if a == assignment}):
        paths = [p for a, g, p in alternatives() if a == assignment and g == grade_id]
        for k, path in enumerate(paths, 1):
            groups.setdefault(f"alternatives-{k}", {})[grade_id] = path
    return groups


def alternative_group(assignment: str, grade_id: str, path: Path) -> str:
    """The student id of the notebook in which the alternative at `path` is graded (:func:`alternative_groups`)."""
    return next(student for student, cells in alternative_groups(assignment).items() if cells.get(grade_id) == path)


def digest(*folders: Path) -> str:
    """A hash of the names and contents of every file under `folders`."""
    h = hashlib.sha256()
    for folder in folders:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                h.update(str(p).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()
