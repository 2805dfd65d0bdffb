"""Feedback points at the student's own line, never at the grader's or a library's, and shows no hidden test."""
import ast
import sysconfig
from pathlib import Path

import nbclient
import nbformat
import pytest

from autograde.course import assignment_ids, source_notebook
from autograde.results.classify import hidden_test_lines, hidden_tests
from autograde.results.tracebacks import (
    REDACTED,
    Frame,
    Hidden,
    graders_own_verdict,
    raised_by_student,
    redact,
    squeeze,
    student_frame,
)


def _cell(source, count, nbgrader=None):
    cell = nbformat.v4.new_code_cell(source)
    cell.execution_count = count
    if nbgrader is not None:
        cell.metadata["nbgrader"] = nbgrader
    return cell


def _notebook():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _cell("import numpy as np", 1, {"grade_id": "setup", "locked": True, "solution": False, "grade": False}),
        _cell("def softmax(x):\n    e = np.exp(x)\n    return e / e.sum(axis=2)\n", 2, {"grade_id": "softmax", "solution": True}),
        _cell("def helper(x):\n    return softmax(x)[0]\n", 3),  # a cell the student added
        _cell("# Visible test: shape.\nassert softmax(np.zeros((2, 3))).shape == (2, 3)\n", 4,
              {"grade_id": "test_softmax", "grade": True, "solution": False, "locked": True, "points": 1}),
    ]
    return nb


# IPython 9's frames, colours included, as an error output carries them.
TRACEBACK = [
    "\x1b[31m---------------------------------------------------------------------------\x1b[39m",
    "\x1b[31mAxisError\x1b[39m                                 Traceback (most recent call last)",
    "\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[4]\x1b[39m\x1b[32m, line 2\x1b[39m\n\x1b[32m      1\x1b[39m # Visible test: shape.\n"
    "\x1b[32m----> \x1b[39m\x1b[32m2\x1b[39m assert softmax(np.zeros((2, 3))).shape == (2, 3)\n",
    "\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[2]\x1b[39m\x1b[32m, line 3\x1b[39m, in \x1b[36msoftmax\x1b[39m\x1b[34m(x)\x1b[39m\n"
    "\x1b[32m      2\x1b[39m     e = np.exp(x)\n\x1b[32m----> \x1b[39m\x1b[32m3\x1b[39m     return e / e.sum(axis=2)\n",
    "\x1b[36mFile \x1b[39m\x1b[32m/venv/lib/python3.11/site-packages/numpy/_core/_methods.py:52\x1b[39m, in \x1b[36m_sum\x1b[39m\n",
    "\x1b[31mAxisError\x1b[39m: axis 2 is out of bounds for array of dimension 2",
]


def test_the_last_frame_in_a_solution_cell_is_found_with_its_line():
    assert student_frame(_notebook(), TRACEBACK) == Frame("cell 'softmax'", 3, "return e / e.sum(axis=2)", "softmax")


def test_a_cell_the_student_added_is_theirs_too():
    tb = TRACEBACK[:3] + ["Cell In[3], line 2, in helper(x)\n      1 def helper(x):\n----> 2     return softmax(x)[0]\n",
                          TRACEBACK[-1]]
    assert student_frame(_notebook(), tb) == Frame("the cell you added at position 3", 2, "return softmax(x)[0]", "helper")


def test_an_error_in_the_test_itself_or_a_library_names_no_frame():
    assert student_frame(_notebook(), TRACEBACK[:3] + TRACEBACK[-2:]) is None
    assert student_frame(_notebook(), ["AssertionError: each row must sum to 1"]) is None


def test_a_frame_prints_as_cell_line_and_code():
    assert str(Frame("cell 'softmax'", 3, "return e / e.sum(axis=2)", "softmax")) == (
        "cell 'softmax', line 3, in softmax: return e / e.sum(axis=2)")


@pytest.mark.slow
def test_the_frame_is_found_in_what_a_real_kernel_writes():
    """Guards against IPython changing how it names cells in tracebacks."""
    nb = _notebook()
    for cell in nb.cells:
        cell.execution_count, cell.outputs = None, []
    nbclient.NotebookClient(nb, allow_errors=True, kernel_name="python3", timeout=60).execute()
    error = next(o for o in nb.cells[3].outputs if o.output_type == "error")
    assert student_frame(nb, error.traceback) == Frame("cell 'softmax'", 3, "return e / e.sum(axis=2)", "softmax")


# Whose message it is ----------------------------------------------------------------------------------------

def test_an_exception_raised_in_the_students_cell_is_theirs_even_below_a_library_call():
    # The student's frame is the innermost cell frame: numpy's frame after it does not make it the test's message.
    assert raised_by_student(_notebook(), TRACEBACK)
    own = TRACEBACK[:3] + ["Cell In[3], line 2, in helper(x)\n----> 2     return softmax(x)[0]\n", TRACEBACK[-1]]
    assert raised_by_student(_notebook(), own)
    # Code the student made with exec runs in no cell: a frame of "<string>" after the test's frame is theirs too.
    made = TRACEBACK[:3] + ["File <string>:2, in softmax(x)\n", TRACEBACK[-1]]
    assert raised_by_student(_notebook(), made)


def test_a_tests_own_assertion_or_a_library_called_by_the_test_is_the_tests_message():
    assert not raised_by_student(_notebook(), TRACEBACK[:3] + [TRACEBACK[-1]])
    numpy_file = Path(sysconfig.get_paths()["purelib"]) / "numpy" / "_core" / "_methods.py"
    library = TRACEBACK[4].replace("/venv/lib/python3.11/site-packages/numpy/_core/_methods.py", str(numpy_file))
    assert not raised_by_student(_notebook(), TRACEBACK[:3] + [library, TRACEBACK[-1]])
    assert not raised_by_student(_notebook(), ["KernelDied: the kernel died while running this cell"])


def test_the_line_shown_is_read_from_the_students_cell_not_from_the_traceback():
    # Student code can rewrite what the kernel prints for a line (linecache): the cell's own source decides.
    forged = [TRACEBACK[2], "Cell In[2], line 3, in softmax(x)\n----> 3     expected = [0.25, 0.0, 0.75]  # a test line\n",
              TRACEBACK[-1]]
    assert student_frame(_notebook(), forged) == Frame("cell 'softmax'", 3, "return e / e.sum(axis=2)", "softmax")


# Redaction --------------------------------------------------------------------------------------------------

HIDDEN = [squeeze('expect_close(got, [0.25, 0.0, 0.75], "softmax([0, -inf, log 3])", warned=warned)'),
          squeeze("for axis in (-1, 0, 1, 2, 3, -2):")]


def test_a_hidden_line_is_removed_however_it_is_spaced_or_split():
    leaks = [
        'expect_close(got, [0.25, 0.0, 0.75], "softmax([0, -inf, log 3])", warned=warned)',
        'x | expect_close(got,[0.25, 0.0, 0.75],\n   "softmax([0, -inf, log 3])",   warned=warned) | y',
        "f\u200bor axis in (-1, 0,\u00a01, 2, 3, -2):",  # a zero-width space and a no-break space
    ]
    for leak in leaks:
        shown = redact(leak, HIDDEN)
        assert REDACTED in shown and "0.75" not in shown and "axis in" not in shown, shown
    assert redact("a | for axis in (-1, 0, 1, 2, 3, -2): | b", HIDDEN) == f"a | {REDACTED} | b"


def test_honest_text_is_left_as_it_is():
    honest = 'softmax([0, -inf, log 3]) is wrong at index (1,): expected 0, got 0.333333 (1 of 3 entries differ).'
    assert redact(honest, HIDDEN) == honest
    assert redact("", HIDDEN) == "" and redact(honest, []) == honest


@pytest.mark.parametrize("assignment", assignment_ids())
def test_every_message_a_hidden_test_can_give_survives_redaction(assignment):
    # The words of the tests' messages are string literals in the hidden lines; a line is redacted only whole, so
    # no message loses a word. (Each literal here stands for a message, or the start of one.)
    hidden = hidden_test_lines(assignment)
    assert hidden, f"{assignment} has no hidden test lines"
    literals = []
    for cell in source_notebook(assignment).cells:
        if cell.metadata.get("nbgrader", {}).get("grade") and cell.cell_type == "code":
            tree = ast.parse(cell.source)
            # A docstring documents a helper for the instructor; no test raises it, and its lines are hidden code.
            docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                          if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                          and node.body and isinstance(node.body[0], ast.Expr)
                          and isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str)}
            for node in ast.walk(tree):
                if (isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) > 20
                        and id(node) not in docstrings):
                    literals.append(node.value)
    assert literals
    changed = [text for text in literals if redact(text, hidden) != text]
    assert not changed, f"redaction cuts honest messages of {assignment}: {changed[:3]}"


def test_a_hidden_line_cut_short_is_removed_by_its_code_but_its_message_words_are_not():
    line = 'oracle = np.array([[q[i] @ k[j] / np.sqrt((q[i] @ q[i]) * (k[j] @ k[j])) for j in range(6)] for i in range(4)])'
    message = 'expect_close(scaled, oracle, "cosine_scores after scaling each query and key by a positive number")'
    hidden = Hidden.of([line, message])
    cut = line[:-5]  # the whole line is no longer there, only most of it
    assert REDACTED in redact(f"x {cut} y", hidden) and "np.sqrt" not in redact(f"x {cut} y", hidden)
    assert redact(f"x {cut} y", Hidden(hidden.lines)) == f"x {cut} y"  # (whole lines alone would miss it)
    honest = "cosine_scores after scaling each query and key by a positive number is wrong at index (0, 1)"
    assert redact(honest, hidden) == honest
    assert not Hidden.of([line], visible=squeeze(line)).windows, "code the released notebook shows is no secret"


@pytest.mark.parametrize("assignment", assignment_ids())
def test_an_honest_error_naming_any_name_of_the_hidden_tests_survives_redaction(assignment):
    # A NameError or AttributeError names a name that the hidden code uses too (sinusoidal_positional_encoding).
    hidden = hidden_tests(assignment)
    names = {node.id for cell in source_notebook(assignment).cells if cell.cell_type == "code"
             for node in ast.walk(ast.parse(cell.source)) if isinstance(node, ast.Name)}
    messages = [f"name '{n}' is not defined" for n in names] + [f"'Tensor' object has no attribute '{n}'" for n in names]
    changed = [m for m in messages if redact(m, hidden) != m]
    assert not changed, changed[:3]


# Hole 6 of the red-team report: a hidden test read back through the test's own helper, or disguised -------------

SETUP_FRAME = ("Cell In[1], line 9, in expect_close(actual, expected, what)\n"
               "----> 9     raise AssertionError(what)\n")


def test_a_test_helper_called_by_student_code_raises_the_students_message():
    # The student's softmax calls the setup cell's expect_close with a message of its choosing: the exception is
    # raised in the grader's cell, but the student's frame between the test and the raise makes the message theirs.
    through_helper = TRACEBACK[:3] + ["Cell In[2], line 3, in softmax(x)\n----> 3     expect_close(0, 1, text)\n",
                                      SETUP_FRAME, "AssertionError: \nthe hidden test"]
    assert raised_by_student(_notebook(), through_helper)
    # The same through code the student made with exec, or through a library the student called.
    made = TRACEBACK[:3] + ["File <string>:2, in softmax(x)\n", SETUP_FRAME, "AssertionError: x"]
    assert raised_by_student(_notebook(), made)
    # With no student frame on the way, the setup cell's helper gives the test's own verdict, as before.
    assert not raised_by_student(_notebook(), TRACEBACK[:3] + [SETUP_FRAME, "AssertionError: wrong at index 0"])
    # A test that calls its helper through another of its own cells (retry_with_reference, then the check).
    own = TRACEBACK[:3] + [SETUP_FRAME.replace("expect_close", "retry_with_reference"),
                           "Cell In[4], line 1, in check()\n", SETUP_FRAME, "AssertionError: wrong at index 0"]
    assert not raised_by_student(_notebook(), own)


def _cyrillic(text):
    # Look-alike letters a student would type: Cyrillic а е о р с х у and Greek ο α ν.
    return text.translate(str.maketrans("aeopcxyOAv", "аеорсхуοαν"))


@pytest.mark.parametrize("disguise", [
    str.upper, str.swapcase, str.title, _cyrillic,
    lambda text: text[::-1],  # the whole text reversed
    lambda text: "\n".join(line[::-1] for line in text.splitlines()),  # each line reversed
    lambda text: text.translate({ord(c): ord(c) + 0xFEE0 for c in "abcdefghijklmnopqrstuvwxyz()[],"}),  # fullwidth
    lambda text: "".join(c + "\u0336" for c in text),  # a combining stroke after every letter
    lambda text: _cyrillic(text.upper())[::-1],
], ids=["upper", "swapcase", "title", "cyrillic", "reversed", "lines-reversed", "fullwidth", "combining", "all"])
def test_a_hidden_line_disguised_by_case_look_alikes_or_reversal_is_removed(disguise):
    source = ('expect_close(got, [0.25, 0.0, 0.75], "softmax([0, -inf, log 3])", warned=warned)\n'
              "for axis in (-1, 0, 1, 2, 3, -2):")
    shown = redact(f"before | {disguise(source)} | after", HIDDEN)
    assert "0.75" not in shown and "57.0" not in shown and "2-,3" not in "".join(shown.split()), shown
    assert shown.count(REDACTED) >= 1 and "before" in shown and "after" in shown, shown
    # The cut-short windows see through the disguises too.
    line = 'oracle = np.array([[q[i] @ k[j] / np.sqrt((q[i] @ q[i]) * (k[j] @ k[j])) for j in range(6)] for i in range(4)])'
    cut = disguise(line[:-5])
    assert REDACTED in redact(f"x {cut} y", Hidden.of([line])), redact(f"x {cut} y", Hidden.of([line]))


def test_honest_text_in_capitals_or_another_alphabet_is_left_as_it_is():
    honest = ["SOFTMAX IS WRONG AT INDEX (0,): EXPECTED 0.25, GOT 1",
              "name 'ѕoftmax' is not defined", "Ошибка: неверная форма (2, 3)", "ValueError: ΑΒΓ"]
    for text in honest:
        assert redact(text, HIDDEN) == text


def test_only_an_assertion_the_graders_cells_raised_on_their_own_is_the_tests_verdict():
    # Student code can compile a function under a library's file name: its frame then reads as a library's. A test's
    # verdict (shown at length) is therefore only an exception raised with nothing but the grader's cells on the way.
    numpy_file = Path(sysconfig.get_paths()["purelib"]) / "numpy" / "_core" / "_methods.py"
    library = f"File {numpy_file}:52, in _sum(a)\n"
    assert graders_own_verdict(_notebook(), TRACEBACK[:3] + [SETUP_FRAME, "AssertionError: wrong at index 0"])
    assert graders_own_verdict(_notebook(), TRACEBACK[:3] + ["AssertionError: wrong at index 0"])
    assert not graders_own_verdict(_notebook(), TRACEBACK[:3] + [library, "AssertionError: \nthe hidden test"])
    assert not graders_own_verdict(_notebook(), TRACEBACK[:3] + [library, SETUP_FRAME, "AssertionError: \nx"])
    assert not graders_own_verdict(_notebook(), TRACEBACK)
    # (No frame at all: the grader's own error, a dead kernel or a timeout.)
    assert graders_own_verdict(_notebook(), ["KernelDied: the kernel died while running this cell"])
    # A "library" that calls back into the grader's helper is student code in disguise: the message is theirs.
    assert raised_by_student(_notebook(), TRACEBACK[:3] + [library, SETUP_FRAME, "AssertionError: \nx"])
