"""Unit tests of the classify step (no kernel): from what the execute step recorded and the outputs, to a Status."""
import csv

import nbformat
import pytest
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbgrader.utils import determine_grade

from autograde.course import assignment_ids
from autograde.results.classify import (
    STUDENT_MESSAGE_CHARS,
    CellResult,
    Graded,
    Status,
    autograde_failure,
    cell_results,
    classify_cell,
    execution_notes,
    graded_cells,
    graders_fault,
    timed_out,
)
from autograde.results.outputs import write_csvs
from autograde.run.execute import (
    AgentNotStarted,
    CheckerBroke,
    Event,
    Failure,
    GuardedExecute,
    KernelStuck,
    events,
    failures_recorded,
    no_verdict,
    record,
)

FIRST = assignment_ids()[0]


def cell(*outputs, grade_id="test_x", solution=False, **happened):
    """A test (or, with `solution`, an answer) cell with `outputs` and the events `happened` recorded."""
    new = nbformat.v4.new_code_cell("assert f() == 1")
    new.metadata["nbgrader"] = {"grade_id": grade_id, "grade": not solution, "solution": solution, "points": 1}
    new.outputs = list(outputs)
    for event, details in happened.items():
        record(new, Event(event), **details)
    return new


def error(name, value=""):
    return nbformat.v4.new_output("error", ename=name, evalue=value, traceback=[])


def stream(text, name="stdout"):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_a_cell_that_shows_no_failure_is_not_classified():
    assert classify_cell(cell()) is None
    assert classify_cell(cell(stream("all good\n"))) is None


def test_stderr_is_not_a_failure():
    # nbgrader alone would score this as failed; the README promises it costs nothing.
    assert classify_cell(cell(stream("a harmless warning\n", "stderr"))) is None


def test_text_the_grader_once_searched_for_decides_nothing():
    # Only the record in the metadata counts: a student printing the grader's words changes no status and adds no note.
    printed = cell(stream("[output cut at 100,000 characters by the grader]\n"),
                   stream("KernelDied TamperingError CellTimeoutError\n"))
    assert classify_cell(printed) is None
    assert execution_notes(nbformat.v4.new_notebook(cells=[printed])) == []


@pytest.mark.parametrize("name, status", [("AssertionError", Status.FAILED), ("ValueError", Status.ERROR),
                                          ("KeyboardInterrupt", Status.ERROR), ("NameError", Status.ERROR)])
def test_an_exception_is_a_failed_test_only_if_it_is_an_assertion(name, status):
    assert classify_cell(cell(error(name, "row 0 sums to 2.0\nmore detail"))) == (status, f"{name}: row 0 sums to 2.0")
    assert classify_cell(cell(error(name))) == (status, name)


def test_the_first_exception_decides():
    assert classify_cell(cell(error("AssertionError", "first"), error("ValueError", "second")))[0] == Status.FAILED


def test_not_implemented_says_what_to_do():
    status, message = classify_cell(cell(error("NotImplementedError")))
    assert status == Status.ERROR and "replace raise NotImplementedError() with your code" in message


@pytest.mark.parametrize("event, status, words", [
    ("killed", Status.CRASHED, "the kernel died"),
    ("timed_out", Status.TIMEOUT, "time limit"),
])
def test_what_the_execute_step_recorded_decides_over_the_outputs(event, status, words):
    # Whatever the outputs say (here: a plain assertion), the record decides.
    got = classify_cell(cell(error("AssertionError", "wrong"), **{event: {}}))
    assert got[0] == status and words in got[1], got


def test_after_a_timeout_an_error_counts_as_the_timeout_but_a_test_verdict_stays():
    status, message = classify_cell(cell(error("NameError", "name 'f' is not defined")), notebook_timed_out=True)
    assert status == Status.TIMEOUT and "earlier cell ran longer than the time limit" in message
    assert "NameError" in message
    assert classify_cell(cell(error("AssertionError", "no")), notebook_timed_out=True)[0] == Status.FAILED


def test_malformed_or_unknown_records_are_ignored():
    odd = cell()
    odd.metadata["autograde"] = "not a dict"
    assert events(odd) == {} and classify_cell(odd) is None
    odd.metadata["autograde"] = {"something_new": {}, "timed_out": "yes"}
    assert events(odd) == {Event.TIMED_OUT: {}}


def executed_notebook(outcomes: dict) -> nbformat.NotebookNode:
    """The first assignment's test cells, each with the outputs and events `outcomes` gives its grade id."""
    cells = [cell(*outcomes.get(g, ((), {}))[0], grade_id=g, **outcomes.get(g, ((), {}))[1])
             for g, _ in graded_cells(FIRST)]
    return nbformat.v4.new_notebook(cells=cells)


def test_cell_results_combine_the_gradebooks_points_with_the_record():
    cells = graded_cells(FIRST)
    (first, first_max), (second, _), (third, _), (fourth, _) = cells[:4]
    scores = {g: m for g, m in cells}
    scores[second] = 0.0
    scores[third] = 0.0
    del scores[fourth]
    outcomes = {second: ([error("AssertionError", "rows must sum to 1")], {}), third: ([], {})}
    rows = cell_results("ann", FIRST, executed_notebook(outcomes), scores)
    by_id = {r.grade_id: r for r in rows}
    assert [r.grade_id for r in rows] == [g for g, _ in cells]
    assert (by_id[first].status, by_id[first].score, by_id[first].max_score) == (Status.PASSED, first_max, first_max)
    assert (by_id[second].status, by_id[second].message) == (Status.FAILED, "AssertionError: rows must sum to 1")
    assert (by_id[third].status, by_id[third].message) == (Status.FAILED, "scored less than full marks")
    assert (by_id[fourth].status, by_id[fourth].score) == (Status.MISSING, 0.0)
    assert {r.status for g, r in by_id.items() if g not in (second, third, fourth)} == {Status.PASSED}


def test_a_lost_point_keeps_the_whole_message_and_the_students_own_line():
    cells = graded_cells(FIRST)
    (first, _), (second, _) = cells[:2]
    scores = {g: m for g, m in cells} | {first: 0.0, second: 0.0}
    notebook = executed_notebook({first: ([error("AssertionError", "rows must sum to 1\nrow 0 sums to 2.0")], {}),
                                  second: ([error("ValueError", "bad axis")], {})})
    answer = cell(grade_id="softmax", solution=True)
    answer.source, answer.execution_count = "def softmax(x):\n    return x / x.sum(axis=2)\n", 7
    notebook.cells.insert(0, answer)
    notebook.cells[2].outputs[0].traceback = [
        "Cell In[9], line 1\n----> 1 assert f() == 1\n",
        "Cell In[7], line 2, in softmax(x)\n      1 def softmax(x):\n----> 2     return x / x.sum(axis=2)\n",
        "ValueError: bad axis"]
    by_id = {r.grade_id: r for r in cell_results("ann", FIRST, notebook, scores)}
    assert (by_id[first].message, by_id[first].details) == (
        "AssertionError: rows must sum to 1", "rows must sum to 1\nrow 0 sums to 2.0")
    assert by_id[first].where == ""  # the test's own assertion: no line of the student's to show
    assert by_id[second].where == "cell 'softmax', line 2, in softmax: return x / x.sum(axis=2)"
    assert all(r.details == r.where == "" for r in by_id.values() if r.status is Status.PASSED)


def test_a_timeout_anywhere_relabels_the_errors_that_followed_it():
    cells = graded_cells(FIRST)
    (first, _), (second, _) = cells[:2]
    scores = {g: m for g, m in cells} | {first: 0.0, second: 0.0}
    notebook = executed_notebook({first: ([], {"timed_out": {}}), second: ([error("NameError", "f")], {})})
    statuses = {r.grade_id: r.status for r in cell_results("ann", FIRST, notebook, scores)}
    assert statuses[first] == statuses[second] == Status.TIMEOUT


def test_full_points_pass_whatever_the_outputs_show():
    cells = graded_cells(FIRST)
    notebook = executed_notebook({cells[0][0]: ([stream("x", "stderr"), error("ValueError")], {})})
    rows = cell_results("ann", FIRST, notebook, dict(cells))
    assert {r.status for r in rows} == {Status.PASSED}


def test_execution_notes_name_what_happened_and_where():
    answer = cell(grade_id="cosine_scores", solution=True, timed_out={})
    test_timed_out = cell(grade_id="test_cosine_scores", timed_out={})
    killed = cell(grade_id="nadaraya_watson", solution=True, killed={"last_words": "Fatal Python error: Segmentation fault"})
    cut = cell(grade_id="dot_scores", solution=True, cut_short={"kept_chars": 100_000})
    notes = execution_notes(nbformat.v4.new_notebook(cells=[answer, test_timed_out, killed, cut]))
    assert any("Cell cosine_scores was stopped at the time limit" in n for n in notes)
    assert not any("test_cosine_scores" in n for n in notes)  # a test's timeout is its status, not a note
    assert any("kernel died in cell nadaraya_watson" in n and "its log shows a Segmentation fault" in n for n in notes)
    assert not any("Fatal Python error" in n for n in notes), "a note quotes the dead kernel's log"
    assert "The output of 1 of your cell(s) was cut short because it was too long (this costs no points)." in notes
    assert len(notes) == 3


def test_a_dead_kernels_cause_is_the_most_specific_one_its_log_shows():
    from autograde.results.classify import death_cause

    assert "out of memory" in death_cause("terminate called after throwing 'std::bad_alloc'\nAborted")
    assert "Segmentation fault" in death_cause("Fatal Python error: Segmentation fault\n\nCurrent thread ...")
    assert death_cause("anything a student printed") == ""


@pytest.mark.parametrize("failure, status", [
    (Failure.TIMEOUT, Status.TIMEOUT), (Failure.DEAD_KERNEL, Status.CRASHED), (None, Status.ERROR)])
def test_a_notebook_nbgrader_could_not_grade_gets_the_reason_the_execute_step_recorded(failure, status):
    log = "Traceback (most recent call last):\n  File x\nValueError: no such cell\n"
    got, message = autograde_failure(failure, log)
    assert got == status
    if status == Status.ERROR:
        assert message.endswith("ValueError: no such cell")  # the last exception line, not the first line


@pytest.mark.parametrize("written", ["Timeout", "nbclient.exceptions.CellTimeoutError: A cell timed out",
                                     "DeadKernelError: Kernel died", "RuntimeError: the grader's agent failed to start"])
def test_what_the_log_says_does_not_decide_the_status(written):
    # The log holds what the student's code printed: only the failure the execute step recorded decides.
    log = f"[ERROR] {written}\nTraceback (most recent call last):\n  File x\nValueError: no such cell\n"
    got, message = autograde_failure(None, log)
    assert got == Status.ERROR and "grade it again" not in message, (got, message)
    assert not graders_fault(None)


def test_an_agent_that_did_not_start_is_the_graders_failure_not_the_students_timeout():
    # (As a CI run on a starved core logged it: the grader's start in the kernel waited past the cell limit.) The
    # student's cells never ran: "timeout" would blame the student, and a cached zero would stay.
    got, message = autograde_failure(Failure.AGENT_NOT_STARTED, "[ERROR] Timeout waiting for execute reply (3s).")
    assert got == Status.ERROR, message
    assert "grade it again" in message and "time limit" not in message, message
    assert graders_fault(Failure.AGENT_NOT_STARTED) and not graders_fault(Failure.TIMEOUT)
    assert graders_fault(Failure.CHECKER), "the checker never runs student code: its failure is the grader's"


@pytest.mark.parametrize("error, failure", [
    (AgentNotStarted("the grader's agent failed to start: x"), Failure.AGENT_NOT_STARTED),
    (CellTimeoutError("a cell timed out"), Failure.TIMEOUT), (KernelStuck(), Failure.TIMEOUT),
    (DeadKernelError("Kernel died"), Failure.DEAD_KERNEL), (RuntimeError("Timeout: Kernel died"), None),
    (CheckerBroke("the grader's checker failed on cell 3"), Failure.CHECKER)])
def test_the_execute_step_records_the_failure_that_ended_it(error, failure):
    class Failing(GuardedExecute):
        def _preprocess(self, nb, resources=None, km=None):
            raise error

    with failures_recorded() as failures:
        with pytest.raises(type(error)):
            Failing().preprocess(nbformat.v4.new_notebook(), {})
    assert failures == ([failure] if failure else []), failures
    with pytest.raises(type(error)):  # (nothing is recorded outside the block)
        Failing().preprocess(nbformat.v4.new_notebook(), {})
    assert failures == ([failure] if failure else [])


def test_statuses_are_written_as_their_names(tmp_path):
    rows = [CellResult("ann", FIRST, "test_softmax", 1.0, 1.0, Status.PASSED, ""),
            CellResult("ann", FIRST, "test_dot_scores", 0.0, 2.0, Status.CRASHED, "no")]
    write_csvs(rows, tmp_path, {"ann": "42"})
    with open(tmp_path / "scores.csv", newline="") as f:
        written = list(csv.DictReader(f))
    assert [r["status"] for r in written] == ["passed", "crashed"]
    assert [r["lms_user_id"] for r in written] == ["42", "42"]
    with open(tmp_path / "grades.csv", newline="") as f:
        assert list(csv.DictReader(f)) == [{"student_id": "ann", "lms_user_id": "42", "assignment": FIRST,
                                            "score": "1.0", "max_score": "3.0", "raw_score": "1.0",
                                            "late_penalty": "0.0", "submitted_at": "", "late_by": "",
                                            "time_source": ""}]


def test_a_status_read_back_as_text_is_the_enum_again():
    row = CellResult("ann", FIRST, "test_softmax", 0.0, 1.0, "timeout", "too slow")
    assert row.status is Status.TIMEOUT and row.status.is_problem and not Status.FAILED.is_problem
    with pytest.raises(ValueError):
        CellResult("ann", FIRST, "test_softmax", 0.0, 1.0, "timed out", "no such status")
    assert Graded([row]).keep


# Issue 19: only the test's verdict scores, no hidden test is shown, a timeout is what the executor saw ------------

def test_output_that_student_code_shows_inside_a_test_cell_scores_nothing():
    # nbgrader reads the first execute_result as a grade (text: full points; a number: partial credit) before it
    # looks for the error; no_verdict leaves the test's own verdict (an error, or none) to decide.
    def result(text):
        return nbformat.v4.new_output("execute_result", data={"text/plain": text}, execution_count=3)

    forged = cell(result("'all tests passed'"), error("AssertionError", "rows must sum to 1"))
    number = cell(result("0.5"), error("AssertionError", "rows must sum to 1"))
    passing = cell(result("0.5"))
    assert [determine_grade(c)[0] for c in (forged, number, passing)] == [1.0, 0.5, 0.5]  # nbgrader alone
    for c in (forged, number, passing):
        no_verdict(c)
        assert "execute_result" not in [o.output_type for o in c.outputs]
        nbformat.validate(nbformat.v4.new_notebook(cells=[c]))
    assert [determine_grade(c)[0] for c in (forged, number, passing)] == [0, 0, 1.0]
    assert passing.outputs[0].data == {"text/plain": "0.5"}  # still shown


def test_an_exception_named_like_the_graders_timeout_is_an_error_without_a_record():
    spoofed = cell(error("CellTimeoutError", "No reply from kernel before timeout"))
    assert classify_cell(spoofed)[0] is Status.ERROR
    notebook = nbformat.v4.new_notebook(cells=[spoofed])
    assert not timed_out(notebook) and execution_notes(notebook) == []


def test_a_students_own_exception_is_shown_as_one_bounded_line_with_their_frame():
    cells = graded_cells(FIRST)
    first = cells[0][0]
    scores = {g: m for g, m in cells} | {first: 0.0}
    long = "x" * 1000 + "\nline two\nline three"
    notebook = executed_notebook({first: ([error("ValueError", long)], {})})
    answer = cell(grade_id="softmax", solution=True)
    answer.source, answer.execution_count = "def softmax(x):\n    raise ValueError(the_tests_source())\n", 7
    notebook.cells.insert(0, answer)
    notebook.cells[1].outputs[0].traceback = [
        "Cell In[9], line 1\n----> 1 assert f() == 1\n",
        "Cell In[7], line 2, in softmax(x)\n----> 2     raise ValueError(the_tests_source())\n", "ValueError: ..."]
    [row] = [r for r in cell_results("ann", FIRST, notebook, scores) if r.grade_id == first]
    assert row.details == "x" * STUDENT_MESSAGE_CHARS
    assert len(row.message) <= len("ValueError: ") + STUDENT_MESSAGE_CHARS and "\n" not in row.message
    assert row.where == "cell 'softmax', line 2, in softmax: raise ValueError(the_tests_source())"


def test_a_message_given_to_the_tests_own_helper_by_student_code_is_the_students():
    # Red-team hole 6a: the student's softmax calls the setup cell's expect_close(0.0, 1.0, "\n" + hidden_text). The
    # AssertionError is raised in a grader's cell, but with the student's frame on the way it is cut as theirs.
    cells = graded_cells(FIRST)
    first = cells[0][0]
    scores = {g: m for g, m in cells} | {first: 0.0}
    read_back = "\n" + "\n".join(f"line {i}: " + "y" * 200 for i in range(15))
    notebook = executed_notebook({first: ([error("AssertionError", read_back)], {})})
    setup = cell(grade_id="setup", solution=False)
    setup.metadata["nbgrader"]["grade"] = False
    setup.source, setup.execution_count = "def expect_close(actual, expected, what):\n    raise AssertionError(what)\n", 1
    answer = cell(grade_id="softmax", solution=True)
    answer.source, answer.execution_count = "def softmax(x):\n    expect_close(0.0, 1.0, the_tests_source())\n", 7
    notebook.cells[:0] = [setup, answer]
    notebook.cells[2].outputs[0].traceback = [
        "Cell In[9], line 1\n----> 1 assert f() == 1\n",
        "Cell In[7], line 2, in softmax(x)\n----> 2     expect_close(0.0, 1.0, the_tests_source())\n",
        "Cell In[1], line 2, in expect_close(actual, expected, what)\n----> 2     raise AssertionError(what)\n",
        "AssertionError: ..."]
    [row] = [r for r in cell_results("ann", FIRST, notebook, scores) if r.grade_id == first]
    assert "\n" not in row.details and len(row.details) <= STUDENT_MESSAGE_CHARS, row.details
    assert row.details.startswith("line 0: yyy"), row.details
    assert row.where == "cell 'softmax', line 2, in softmax: expect_close(0.0, 1.0, the_tests_source())"


def test_an_exception_raised_through_a_library_frame_is_shown_as_one_line():
    # A library's exception, or student code compiled under a library's file name, is no test verdict: one line.
    import sysconfig
    from pathlib import Path

    cells = graded_cells(FIRST)
    first = cells[0][0]
    scores = {g: m for g, m in cells} | {first: 0.0}
    notebook = executed_notebook({first: ([error("AssertionError", "\nline one\nline two")], {})})
    numpy_file = Path(sysconfig.get_paths()["purelib"]) / "numpy" / "_core" / "_methods.py"
    notebook.cells[0].execution_count = 9
    notebook.cells[0].outputs[0].traceback = ["Cell In[9], line 1\n----> 1 assert f() == 1\n",
                                              f"File {numpy_file}:52, in _sum(a)\n", "AssertionError: ..."]
    [row] = [r for r in cell_results("ann", FIRST, notebook, scores) if r.grade_id == first]
    assert row.details == "line one", row.details


def test_cells_not_run_at_the_notebook_time_limit_say_so_once():
    """A cell the notebook's whole time limit skipped did not run: neither "ran longer" nor "what it had defined"."""
    skipped = {"notebook_timeout": 600}
    answer = cell(grade_id="cosine_scores", solution=True, timed_out=skipped)
    test = cell(error("TimeoutError", "the notebook's time limit (600 s) ran out before this cell ran"),
                grade_id="test_cosine_scores", timed_out=skipped)
    later = cell(grade_id="nadaraya_watson", solution=True, timed_out=skipped)
    status, message = classify_cell(test)
    assert status == Status.TIMEOUT
    assert "600 s" in message and "ran longer" not in message, message
    notes = execution_notes(nbformat.v4.new_notebook(cells=[answer, test, later]))
    assert len(notes) == 1, notes
    assert "600 s" in notes[0] and "cosine_scores" in notes[0] and "what it had defined" not in notes[0], notes
