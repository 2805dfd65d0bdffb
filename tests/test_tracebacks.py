"""Feedback points at the student's own line, never at the grader's or a library's."""
import nbclient
import nbformat
import pytest

from autograde.tracebacks import Frame, student_frame


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
