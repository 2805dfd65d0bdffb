"""Unit tests of the normalise step (no kernel): reading a submitted file, salvaging it, rebuilding it on the released one."""
import copy
import json

import nbformat
import pytest

from autograde.course import EXERCISES, answer_names, assignment_ids, source_notebook
from autograde.intake.normalise import Unreadable, read_submission, rebuild, salvage
from autograde.reference import solution_code

FIRST = assignment_ids()[0]


def grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def released() -> nbformat.NotebookNode:
    return nbformat.read(EXERCISES / FIRST / f"{FIRST}.ipynb", as_version=4)


def solutions() -> dict[str, str]:
    """The reference answer of each answer cell, by grade id."""
    return {grade_id(c): solution_code(c.source) for c in source_notebook(FIRST).cells
            if c.metadata.get("nbgrader", {}).get("solution")}


def completed() -> nbformat.NotebookNode:
    """The released notebook with every answer filled in, as a student hands it in."""
    nb = released()
    answers = solutions()
    for cell in nb.cells:
        if grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
    return nb


def graded_tests(nb) -> list:
    return [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")
            and not c.metadata.get("nbgrader", {}).get("solution")]


def check_is_released_with_answers(rebuilt, answers=None):
    """The rebuilt notebook has the released cells, in order and with their metadata, and the answers."""
    answers = answers or solutions()
    reference = released()
    ids = [grade_id(c) for c in rebuilt.cells if grade_id(c)]
    assert ids == [grade_id(c) for c in reference.cells if grade_id(c)]
    by_id = {grade_id(c): c for c in rebuilt.cells if grade_id(c)}
    for cell in reference.cells:
        if grade_id(cell) in answers:
            assert by_id[grade_id(cell)].source == answers[grade_id(cell)], grade_id(cell)
        elif grade_id(cell):
            assert by_id[grade_id(cell)].source == cell.source, grade_id(cell)
            assert by_id[grade_id(cell)].metadata["nbgrader"] == cell.metadata["nbgrader"]


def test_an_intact_submission_is_rebuilt_unchanged_and_without_notes():
    rebuilt, notes = rebuild(completed(), released(), answer_names(FIRST))
    assert notes == []
    check_is_released_with_answers(rebuilt)
    assert len(rebuilt.cells) == len(released().cells)


def test_a_copied_answer_cell_runs_as_ordinary_code_after_the_original():
    nb = completed()
    first = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("solution"))
    extra = copy.deepcopy(nb.cells[first])
    extra.source = "# my second try\n" + extra.source
    nb.cells.insert(first + 1, extra)
    rebuilt, notes = rebuild(nb, released(), answer_names(FIRST))
    check_is_released_with_answers(rebuilt)
    assert any("a copy of your answer cell" in n and grade_id(extra) in n for n in notes), notes
    position = [i for i, c in enumerate(rebuilt.cells) if c.source == extra.source]
    original = next(i for i, c in enumerate(rebuilt.cells) if grade_id(c) == grade_id(extra))
    assert position == [original + 1]
    assert "nbgrader" not in rebuilt.cells[original + 1].metadata  # plain code: nbgrader sees one cell per grade id


def test_an_edited_instruction_is_kept_as_released_with_a_note_that_names_it():
    nb = completed()
    text = next(c for c in nb.cells if c.cell_type == "markdown" and grade_id(c))
    text.source = "my own notes"
    rebuilt, notes = rebuild(nb, released(), answer_names(FIRST))
    assert (f"The text {grade_id(text)!r} had been edited: the original was kept instead (edits to the instructions "
            "do not count).") in notes, notes
    assert next(c for c in rebuilt.cells if grade_id(c) == grade_id(text)).source != "my own notes"


def test_deleted_and_edited_test_cells_are_restored_in_place_with_notes():
    nb = completed()
    tests = graded_tests(nb)
    deleted, edited = tests[0], tests[1]
    nb.cells.remove(deleted)
    edited.source = "pass  # nothing to see"
    rebuilt, notes = rebuild(nb, released(), answer_names(FIRST))
    check_is_released_with_answers(rebuilt)
    assert "1 given or test cell(s) were missing from your notebook; the originals were put back." in notes
    assert (f"The test cell {grade_id(edited)!r} had been edited: the original was run instead (edits to given and "
            "test cells do not count).") in notes
    assert not any(repr(grade_id(deleted)) in n for n in notes)  # deleted, not edited


def test_tests_moved_to_the_top_go_back_in_place_without_a_note():
    nb = completed()
    tests = graded_tests(nb)
    nb.cells = tests + [c for c in nb.cells if c not in tests]
    rebuilt, notes = rebuild(nb, released(), answer_names(FIRST))
    check_is_released_with_answers(rebuilt)
    assert notes == []


def test_answers_without_metadata_are_matched_by_the_names_they_define():
    nb = completed()
    for cell in nb.cells:
        cell.metadata = {}
    rebuilt, notes = rebuild(nb, released(), answer_names(FIRST))
    check_is_released_with_answers(rebuilt)
    assert f"{len(solutions())} of your answer cell(s) had lost their nbgrader labels" in " ".join(notes)


def test_a_students_own_cell_keeps_its_place_after_the_cell_it_followed():
    nb = completed()
    anchor = next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("solution"))
    own = nbformat.v4.new_code_cell("print('trying things out')")
    nb.cells.insert(anchor + 1, own)
    rebuilt, _ = rebuild(nb, released(), answer_names(FIRST))
    check_is_released_with_answers(rebuilt)
    at = next(i for i, c in enumerate(rebuilt.cells) if c.source == own.source)
    assert grade_id(rebuilt.cells[at - 1]) == grade_id(nb.cells[anchor])


def test_salvage_keeps_cells_and_drops_what_breaks_the_format():
    content = json.loads(nbformat.writes(completed()))
    markdown = next(c for c in content["cells"] if c["cell_type"] == "markdown")
    markdown["outputs"] = []
    content["cells"][-1]["metadata"]["nbgrader"] = "not a dictionary"
    with pytest.raises(nbformat.ValidationError):
        nbformat.validate(nbformat.from_dict(content))
    nb = salvage(content)
    nbformat.validate(nb)
    assert [c.source for c in nb.cells] == [("".join(c["source"]) if isinstance(c["source"], list) else c["source"])
                                            for c in content["cells"]]
    assert "nbgrader" not in nb.cells[-1].metadata
    kept = [grade_id(c) for c in nb.cells if grade_id(c)]
    assert kept == [grade_id(c) for c in completed().cells[:-1] if grade_id(c)] and kept  # valid metadata stays
    assert salvage({"cells": []}) is None and salvage([1, 2]) is None


@pytest.mark.parametrize("content, problem", [(b"", "empty"), (b"  \n", "empty"), (b"this is not JSON", "not valid JSON"),
                                              (b'{"cells": "none"}', "not a valid notebook")])
def test_a_file_with_no_notebook_is_unreadable_and_says_why(tmp_path, content, problem):
    path = tmp_path / "submitted.ipynb"
    path.write_bytes(content)
    with pytest.raises(Unreadable, match=problem):
        read_submission(path)


def test_reading_a_valid_notebook_notes_nothing_and_a_broken_one_is_salvaged_with_a_note(tmp_path):
    good, broken = tmp_path / "good.ipynb", tmp_path / "broken.ipynb"
    nbformat.write(completed(), good)
    nb, notes = read_submission(good)
    assert notes == [] and len(nb.cells) == len(completed().cells)
    content = json.loads(good.read_text())
    content["cells"][0]["outputs"] = []  # a markdown cell with outputs
    broken.write_text(json.dumps(content))
    nb, notes = read_submission(broken)
    assert len(nb.cells) == len(completed().cells)
    assert len(notes) == 1 and "did not follow the notebook format" in notes[0]
