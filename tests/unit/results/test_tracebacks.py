"""Feedback points at the student's own line, never at the grader's or a library's."""
import sysconfig
from pathlib import Path

import nbclient
import nbformat
import pytest

from autograde.results.tracebacks import Frame, graders_own_verdict, raised_by_student, student_frame


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


# Hole 6 of the red-team report: a message read back through the test's own helper -----------------------------

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
