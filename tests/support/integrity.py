"""Chapter 1 submissions that try to earn points without knowing the answers (issue 19), by student id.

Generators only: tests/e2e/test_integrity.py grades what :func:`integrity_submissions`
makes through the real command and checks that none of them gains anything:
forged passes (outputs that look like a verdict), hidden tests read back onto
the student's own feedback, a kernel killed by a cell added at the top, and a
timeout spoofed with an exception of the grader's name.
"""
from __future__ import annotations

import base64
import codecs
import json
import re
import zlib
from pathlib import Path

import nbformat

from autograde.course import EXERCISES, SOLUTIONS
from tests.support.synthetic import completed_notebook

FIRST = "01-weighted-sum"

# Right-shaped garbage for every answer of chapter 1: each function calls _forge() first, which the variants below
# define to print something that looks like a verdict (or, in "garbage", nothing).
GARBAGE = {
    "softmax": "def softmax(x, axis=-1):\n    _forge()\n    return np.ones_like(np.asarray(x, dtype=float))\n",
    "weighted_average": "def weighted_average(weights, values):\n    _forge()\n"
                        "    return np.zeros(np.shape(weights)[:-1] + np.shape(values)[1:])\n",
    "dot_scores": "def dot_scores(queries, keys):\n    _forge()\n    return np.zeros((len(queries), len(keys)))\n",
    "cosine_scores": "def cosine_scores(queries, keys):\n    _forge()\n    return np.ones((len(queries), len(keys)))\n",
    "gaussian_scores": "def gaussian_scores(queries, keys, bandwidth):\n    _forge()\n"
                       "    return np.ones((len(queries), len(keys)))\n",
    "attention_pool": "def attention_pool(queries, keys, values, score_fn):\n    _forge()\n"
                      "    return np.zeros((len(queries), np.shape(values)[1])), np.zeros((len(queries), len(keys)))\n",
    "nadaraya_watson": "def nadaraya_watson(x_query, x_train, y_train, bandwidth):\n    _forge()\n"
                       "    return np.zeros(np.shape(x_query))\n",
    "temperature": "limit_cold = np.zeros(5)\nlimit_hot = np.zeros(5)\nweights_by_temperature = np.zeros((7, 5))\n",
    "bandwidth": "validation_mse = np.zeros(9)\nchosen_bandwidth = 0.01\n",
}

FORGERIES = {
    "garbage": "def _forge():\n    pass\n",
    # An execute_result that is not a number: nbgrader gives full points before it looks for the error.
    "garbage-forges-text": "import sys\n\ndef _forge():\n    sys.displayhook('all tests passed')\n",
    # A number: nbgrader gives it as partial credit (0.5: no cell is worth less).
    "garbage-forges-number": "import sys\n\ndef _forge():\n    sys.displayhook(0.5)\n",
    # Everything else a cell can show: rich display, a printed verdict, a cleared output.
    "garbage-forges-display": (
        "import IPython.display\n\ndef _forge():\n    IPython.display.clear_output()\n"
        "    IPython.display.display(IPython.display.HTML('<b>passed</b>'))\n    print('All tests passed.')\n"
        "    get_ipython().display_pub.publish({'text/plain': '1.0'})\n"),
}

# Correct answers, but functions that raise, print or die with the source of whoever called them: the test cells,
# hidden tests included, and the notebook's history (IPython's In, the cells run so far).
READS_BACK = {
    # A one-line message made of every caller's source.
    "softmax": """import inspect
import linecache
import sys


def _cell_sources():
    # The source of every notebook cell on the stack, innermost first (IPython keeps them in linecache).
    frame, found = sys._getframe(1), []
    while frame is not None:
        name = frame.f_code.co_filename
        if "ipykernel_" in name or name.startswith("<"):
            found.append("".join(linecache.getlines(name)))
        frame = frame.f_back
    return found


def softmax(x, axis=-1):
    raise ValueError(" | ".join(_cell_sources()).replace("\\n", " | "))
""",
    # A test's "verdict" of many lines: the history of every cell run so far.
    "weighted_average": "def weighted_average(weights, values):\n"
                        "    raise AssertionError('\\n'.join(sys._getframe(1).f_globals['In']))\n",
    # The caller's frame source through inspect, first line included.
    "dot_scores": "def dot_scores(queries, keys):\n"
                  "    raise RuntimeError(inspect.getsource(sys._getframe(1)))\n",
    # An exception whose name is a hidden line (a class made on the spot).
    "cosine_scores": "def cosine_scores(queries, keys):\n"
                     "    line = max(_cell_sources()[1].splitlines(), key=len).strip()\n"
                     "    raise type(line, (Exception,), {})('see the name')\n",
    # Printed, to stdout and stderr, and then a correct answer.
    "gaussian_scores": "def gaussian_scores(queries, keys, bandwidth):\n"
                       "    print(*_cell_sources())\n    print(*_cell_sources(), file=sys.stderr)\n"
                       "    q, k = np.asarray(queries, float), np.asarray(keys, float)\n"
                       "    return -((q[:, None, :] - k[None, :, :]) ** 2).sum(-1) / (2 * bandwidth ** 2)\n",
    # Written to the kernel's own stderr just before the kernel ends: the dead kernel's last words. Each line is cut
    # short by one character, so that no whole line is there to be found.
    "nadaraya_watson": "import os\n\ndef nadaraya_watson(x_query, x_train, y_train, bandwidth):\n"
                       "    source = _cell_sources()[1]\n"
                       "    if '_oracle' in source:\n"
                       "        os.write(2, '\\n'.join(line[:-1] for line in source.splitlines()).encode())\n"
                       "        os._exit(1)\n"
                       "    scores = -((np.asarray(x_query, float)[:, None] - np.asarray(x_train, float)[None, :]) "
                       "/ bandwidth) ** 2 / 2\n"
                       "    return softmax_(scores) @ np.asarray(y_train, float)\n\n\n"
                       "def softmax_(s):\n    e = np.exp(s - s.max(axis=-1, keepdims=True))\n"
                       "    return e / e.sum(axis=-1, keepdims=True)\n",
}

# A cell of its own at the top of the notebook that ends the kernel (a student's stray experiment).
KILLER_AT_TOP = "import os\nos._exit(1)\n"

# A real timeout, for contrast: a correct answer cell that then loops forever is stopped at the time limit.
LOOPS = "while True:\n    pass\n"

# The grader's own exception name, raised by the student: an error, not a timeout.
SPOOFS_TIMEOUT = "class CellTimeoutError(Exception):\n    pass\n\n\ndef softmax(x, axis=-1):\n" \
                 "    raise CellTimeoutError('No reply from kernel before timeout')\n"


# Red-team attacks on the guard itself (issue 19's review), each prepended to the garbage answers above: each must
# score no more than the garbage alone.
GUARD_ATTACKS = {
    # Every test helper's code swapped for a no-op: the names still point at the notebook's functions.
    "swaps-helper-code": "_noop = lambda *args, **kwargs: None\n"
                         "for _f in (expect_close, expect_shape, retry_with_reference):\n"
                         "    _f.__code__ = _noop.__code__\n\n\ndef _forge():\n    pass\n",
    # The kernel's messaging patched at answer time: error messages dropped, failed replies forged as ok.
    "forges-replies": """_session = get_ipython().kernel.session
_send = _session.send


def _quiet(stream, kind, content=None, *args, **kwargs):
    if kind == "error":
        return None
    if kind == "execute_reply" and content.get("status") == "error":
        content = {"status": "ok", "execution_count": content["execution_count"], "user_expressions": {},
                   "payload": []}
    return _send(stream, kind, content, *args, **kwargs)


_session.send = _quiet


def _forge():
    pass
""",
    # The same patch made from inside the test, by the function under test (after the guard's check before it).
    "forges-replies-in-test": """def _forge():
    session = get_ipython().kernel.session
    if getattr(session.send, "__name__", "") == "quiet":
        return
    send = session.send

    def quiet(stream, kind, content=None, *args, **kwargs):
        if kind == "error":
            return None
        if kind == "execute_reply" and content.get("status") == "error":
            content = {"status": "ok", "execution_count": content["execution_count"], "user_expressions": {},
                       "payload": []}
        return send(stream, kind, content, *args, **kwargs)

    session.send = quiet
""",
    # The guard switched off where it lived, then the comparisons the tests make.
    "switches-off-the-guard": """import sys

for _name in [n for n in sys.modules if "guard" in n]:
    sys.modules[_name].check = lambda: []
    sys.modules[_name].after_test = lambda names: []
np.isclose = lambda a, b, **k: np.ones(np.broadcast(np.asarray(a), np.asarray(b)).shape, bool)
np.allclose = lambda *a, **k: True


def _forge():
    pass
""",
    # The guard's entry point, named in the request of the running test, replaced from inside the test with one
    # that answers "nothing changed", and the comparisons patched.
    "replaces-the-guards-entry": """import builtins
import re


def _forge():
    request = get_ipython().kernel.get_parent()
    expression = request.get("content", {}).get("user_expressions", {}).get("r", "")
    found = re.match(r"(\\w+)\\(", expression)
    if found and hasattr(builtins, found.group(1)):
        setattr(builtins, found.group(1), lambda *args, **kwargs: "[1, false, []] 0")
    np.isclose = lambda a, b, **k: np.ones(np.broadcast(np.asarray(a), np.asarray(b)).shape, bool)
    np.allclose = lambda *a, **k: True
""",
}

# An error message of 5 million characters, raised by every call of softmax: the grader must stay small.
HUGE_ERROR_CHARS = 5_000_000
HUGE_ERROR = f"def softmax(x, axis=-1):\n    raise ValueError('A' * {HUGE_ERROR_CHARS})\n"


def integrity_submissions() -> dict[str, nbformat.NotebookNode]:
    """Every submission of this module, by student id (all of chapter 1)."""
    out = {}
    for student, forge in FORGERIES.items():
        cells = dict(GARBAGE)
        cells["softmax"] = forge + "\n\n" + cells["softmax"]
        out[student] = completed_notebook(FIRST, cells)
    for student, attack in GUARD_ATTACKS.items():
        cells = dict(GARBAGE)
        cells["softmax"] = attack + "\n\n" + cells["softmax"]
        out[student] = completed_notebook(FIRST, cells)
    out["huge-error"] = completed_notebook(FIRST, {"softmax": HUGE_ERROR})
    out["reads-back"] = completed_notebook(FIRST, READS_BACK)
    nb = completed_notebook(FIRST)
    nb.cells.insert(0, nbformat.v4.new_code_cell(KILLER_AT_TOP))
    out["dies-at-top"] = nb
    out["spoofs-timeout"] = completed_notebook(FIRST, {"softmax": SPOOFS_TIMEOUT})
    nb = completed_notebook(FIRST)
    answer = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "cosine_scores")
    answer.source += "\n\n" + LOOPS
    out["loops-in-an-answer"] = nb
    return out


def hidden_test_lines(assignment: str = FIRST, min_chars: int = 16) -> list[str]:
    """Every line of `assignment`'s hidden tests (in solutions/<a>/<a>.py), white space removed, of at least
    `min_chars` characters, that the released notebook does not show anyway: what must never reach a student."""
    text = (SOLUTIONS / assignment / f"{assignment}.py").read_text()
    released = "".join((EXERCISES / assignment / f"{assignment}.ipynb").read_text().split())
    lines = []
    for block in re.findall(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", text, re.DOTALL):
        lines += [squeezed for line in block.splitlines()
                  if len(squeezed := "".join(line.split())) >= min_chars and json.dumps(squeezed)[1:-1] not in released]
    return lines


def leaked_lines(text: str, assignment: str = FIRST) -> list[str]:
    """The hidden-test lines of `assignment` that `text` contains (white space ignored): whole, or, for lines of 40
    characters or more, but for their last character."""
    squeezed = "".join(text.split())
    return [line for line in hidden_test_lines(assignment) if (line[:-1] if len(line) >= 40 else line) in squeezed]


def page_text(path: Path) -> str:
    """The text a reader of an HTML page sees (tags dropped, entities decoded)."""
    import html

    return html.unescape(re.sub(r"<[^>]+>", " ", path.read_text()))


# Hidden tests read back in disguise (red-team report, hole 6) -------------------------------------------------------
# Correct answers but for five functions. Each reads the test cell that calls it (IPython's In[-1]) and shows its
# longest lines: through the tests' own helper (so the message looked like the test's verdict, many lines long), in
# capitals, in Cyrillic look-alike letters, reversed, and as the last words of a dying kernel, with HTML in them.
_LONGEST = "def _longest(n=2):\n    return ' | '.join(sorted(In[-1].splitlines(), key=len, reverse=True)[:n])\n"
DISGUISED = {
    "weighted_average": _LONGEST + "\n\ndef weighted_average(weights, values):\n"
                                   "    expect_close(0.0, 1.0, '\\n' + In[-1])\n",
    "dot_scores": "def dot_scores(queries, keys):\n    raise ValueError(_longest().upper())\n",
    "cosine_scores": "def cosine_scores(queries, keys):\n"
                     "    raise ValueError(_longest().translate(str.maketrans('aeopcxy', 'аеорсху')))\n",
    "gaussian_scores": "def gaussian_scores(queries, keys, bandwidth):\n"
                       "    raise ValueError('<b>not done</b> ' + _longest()[::-1])\n",
    "nadaraya_watson": "import os\n\ndef nadaraya_watson(x_query, x_train, y_train, bandwidth):\n"
                       "    if '_oracle' in In[-1]:\n"
                       "        os.write(2, ('<script>alert(1)</script> ' + _longest(4).upper()).encode())\n"
                       "        os._exit(1)\n"
                       "    raise ValueError('<b>not done</b>')\n",
}
# What each disguise does, undone: the text a reader could recover from what the page shows.
def _decoded_runs(text: str, pattern: str, decode) -> str:
    """Every run of `text` matching `pattern`, decoded with `decode` (bytes -> bytes; runs that do not decode are
    skipped), as text, one per line."""
    found = []
    for run in re.findall(pattern, text):
        try:
            found.append(decode(run).decode("utf-8", errors="ignore"))
        except Exception:  # noqa: BLE001 (not that encoding: nothing recovered)
            continue
    return "\n".join(found)


def _base64_zlib(run: str) -> bytes:
    raw = base64.b64decode(run + "=" * (-len(run) % 4))
    try:
        return zlib.decompress(raw)
    except zlib.error:
        return raw


def _integers(text: str) -> str:
    """Byte values written as runs of integers ("(104, 105, ...)", a shape printed by expect_shape), as text."""
    runs = re.findall(r"\d{1,3}(?:\s*,\s*\d{1,3}){7,}", text)
    return "\n".join(bytes(int(n) for n in re.findall(r"\d+", run) if int(n) < 256).decode("utf-8", errors="ignore")
                     for run in runs)


UNDISGUISE = {
    "as shown": lambda text: text,
    "Cyrillic read as Latin": lambda text: text.translate(str.maketrans("аеорсху", "aeopcxy")),
    "each line read backwards": lambda text: "\n".join(line[::-1] for line in text.splitlines()),
    "rot13": lambda text: codecs.decode(text, "rot13"),
    "every other character": lambda text: text[::2] + "\n" + text[1::2],
    "hex": lambda text: _decoded_runs(text, r"(?:[0-9a-fA-F]{2}){16,}", bytes.fromhex),
    "base64, then zlib": lambda text: _decoded_runs(text, r"[A-Za-z0-9+/]{24,}={0,2}", _base64_zlib),
    "integers as bytes": _integers,
}


def disguised_submissions() -> dict[str, nbformat.NotebookNode]:
    """The submission that reads hidden tests back in disguise, by student id."""
    return {"reads-back-disguised": completed_notebook(FIRST, DISGUISED)}


def disguised_leaks(text: str, assignment: str = FIRST) -> dict[str, list[str]]:
    """The hidden-test lines of `assignment` that `text` spells once a disguise is undone, case ignored (white
    space too; lines of 40 characters or more found but for their last character), by the way they were read."""
    lines = [line.casefold() for line in hidden_test_lines(assignment)]
    found = {}
    for how, undo in UNDISGUISE.items():
        squeezed = "".join(undo(text).split()).casefold()
        if leaked := [line for line in lines if (line[:-1] if len(line) >= 40 else line) in squeezed]:
            found[how] = leaked
    return found
