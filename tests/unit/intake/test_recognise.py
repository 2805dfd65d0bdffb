"""Unit tests of collect's recognisers (no grading): which export layout file names follow, and what they say."""
from pathlib import Path, PurePosixPath

import pytest

from autograde.course import assignment_ids
from autograde.intake import gradescope_export, lms
from autograde.intake.collect import clean_stem, match_assignment

ASSIGNMENTS = assignment_ids()
FIRST = ASSIGNMENTS[0]


def recognised(*names: str, forced=None, pattern=None):
    files = [PurePosixPath(n) for n in names]
    layout, entries = lms.recognise(Path("/nonexistent"), files, forced, pattern)
    return layout.name, {str(f): entries[f] for f in files}


def test_canvas_names_give_student_user_id_file_attempt_and_lateness():
    layout, entries = recognised(f"smithjohn_12345_67890_{FIRST}.ipynb", f"doejane_LATE_23456_67901_{FIRST}-1.ipynb")
    assert layout == "canvas"
    john = entries[f"smithjohn_12345_67890_{FIRST}.ipynb"]
    jane = entries[f"doejane_LATE_23456_67901_{FIRST}-1.ipynb"]
    assert john == [lms.Entry("smithjohn", "12345", f"{FIRST}.ipynb", attempt=(67890, 0), late=False)]
    assert jane == [lms.Entry("doejane", "23456", f"{FIRST}-1.ipynb", attempt=(67901, 1), late=True)]


def test_moodle_folders_give_a_safe_student_id_and_the_participant_id():
    layout, entries = recognised(f"Jane O'Doe_4242_assignsubmission_file_/{FIRST}.ipynb",
                                 f"John Smith_4343_assignsubmission_file_/{FIRST}.ipynb")
    assert layout == "moodle"
    assert entries[f"Jane O'Doe_4242_assignsubmission_file_/{FIRST}.ipynb"] == [
        lms.Entry("Jane-O-Doe", "4242", f"{FIRST}.ipynb", name="Jane O'Doe")]  # (the name as written: PDF feedback)


def test_blackboard_attempts_are_ordered_by_their_dates_and_receipts_are_theirs():
    older = f"Weighted sum_jsmith_attempt_2024-01-02-03-04-05_{FIRST}.ipynb"
    newer = f"Weighted sum_jsmith_attempt_2024-01-10-03-04-05_{FIRST}.ipynb"
    receipt = "Weighted sum_jsmith_attempt_2024-01-10-03-04-05.txt"
    layout, entries = recognised(older, newer, receipt)
    assert layout == "blackboard"
    assert entries[older][0].student == entries[newer][0].student == "jsmith"
    assert entries[older][0].attempt < entries[newer][0].attempt
    assert entries[newer][0].context == "Weighted sum" and entries[receipt][0].student == "jsmith"


def test_classroom_copies_and_the_nbgrader_layout():
    assert recognised(f"Jane Doe - Copy of {FIRST}.ipynb", f"John Smith - {FIRST} (1).ipynb")[0] == "classroom"
    layout, entries = recognised(f"alice/{FIRST}/{FIRST}.ipynb", f"bob/{FIRST}/{FIRST}.ipynb")
    assert layout == "nbgrader" and entries[f"alice/{FIRST}/{FIRST}.ipynb"][0].student == "alice"


def test_names_no_layout_claims_stop_with_the_first_names_and_what_to_pass():
    with pytest.raises(ValueError) as raised:
        recognised("homework.ipynb", "final version.ipynb")
    message = str(raised.value)
    assert "homework.ipynb" in message and "--lms" in message and "--student-pattern" in message


def test_a_forced_layout_or_pattern_is_used_as_given():
    canvas = f"smithjohn_12345_67890_{FIRST}.ipynb"
    assert recognised(canvas, forced="folders")[1][canvas] == [lms.Entry("smithjohn", "", canvas)]
    layout, entries = recognised(f"ann-{FIRST}.ipynb", pattern=r"^(?P<student>[^-]+)-")
    assert layout == "folders" and entries[f"ann-{FIRST}.ipynb"][0].student == "ann"


def test_the_specific_layouts_win_over_folders_only_with_half_the_notebooks():
    # One Canvas name among three plain names is not a Canvas export.
    layout, _ = recognised(f"smithjohn_12345_67890_{FIRST}.ipynb", f"ann_{FIRST}.ipynb", f"bob_{FIRST}.ipynb",
                           f"cyd_{FIRST}.ipynb")
    assert layout == "folders"


def test_student_folders_and_flat_students():
    assert lms.student_folder("Jane Doe_4242_assignsubmission_file_") and lms.student_folder("submission_123")
    assert not lms.student_folder("export") and not lms.student_folder("submission_abc")
    assert lms.flat_students([f"ann_{FIRST}.ipynb", f"Jane Doe - {FIRST}.ipynb"]) >= {"ann", "Jane-Doe"}


@pytest.mark.parametrize("name, stem", [("Copy of 01-weighted-sum (1).ipynb", "01-weighted-sum"),
                                        ("01-Weighted-Sum-checkpoint.ipynb", "01-weighted-sum"),
                                        ("copy of copy of hw (2) copy.ipynb", "hw")])
def test_clean_stem_strips_what_tools_add(name, stem):
    assert clean_stem(name) == stem


def test_an_assignment_is_matched_by_its_id_or_its_number_only_if_unambiguous():
    assert match_assignment(f"Copy of {FIRST} (1).ipynb", ASSIGNMENTS) == FIRST
    number = FIRST.split("-")[0]
    assert match_assignment(f"homework {number}.ipynb", ASSIGNMENTS) == FIRST
    assert match_assignment(f"homework 1{number}.ipynb", ASSIGNMENTS) is None  # 101 is not 01
    assert match_assignment(f"{ASSIGNMENTS[0]} and {ASSIGNMENTS[1]}.ipynb", ASSIGNMENTS) is None
    assert match_assignment("notes.ipynb", ASSIGNMENTS) is None


# Issue 19, red team hole 3: the part of an export's name that a student chooses is the name of the file they
# uploaded, which may hold anything, the system's own separators included. Whose notebook it is must come from the
# system's own fields only: each case is a student (alice, or her LMS fields) uploading a file named like another
# student's (bob's) export name.
VICTIM = f"bob_attempt_2099-01-01-00-00-00_{FIRST}.ipynb"
CRAFTED = [
    # (name in the export, layout, forced layout or None, the student, the LMS id, the file name the student gave)
    (f"Weighted Sum_alice_attempt_2024-03-01-10-00-00_{VICTIM}", "blackboard", None, "alice", "alice", VICTIM),
    ("Weighted Sum_alice_attempt_2024-03-01-10-00-00_x_attempt_2099-01-01-00-00-00.txt", "blackboard", "blackboard",
     "alice", "alice", "x_attempt_2099-01-01-00-00-00.txt"),
    (f"Alice Smith_111_assignsubmission_file_x_222_assignsubmission_file_{FIRST}.ipynb", "moodle", None,
     "Alice-Smith", "111", f"x_222_assignsubmission_file_{FIRST}.ipynb"),
    # (A Moodle folder's name ends with the system's fields: the name before them, which a student may be able to
    # edit in their profile, cannot take another participant's id either.)
    (f"Bob Jones_222_assignsubmission_file_x_111_assignsubmission_file_/{FIRST}.ipynb", "moodle", None,
     "Bob-Jones-222-assignsubmission-file-x", "111", f"{FIRST}.ipynb"),
    (f"smithalice_111_900001_jonesbob_222_900999_{FIRST}.ipynb", "canvas", None, "smithalice", "111",
     f"jonesbob_222_900999_{FIRST}.ipynb"),
    (f"smithalice_111_900001_LATE_222_900999_{FIRST}.ipynb", "canvas", None, "smithalice", "111",
     f"LATE_222_900999_{FIRST}.ipynb"),
    # (No name before the user id, as in an anonymous export: digits the student typed must not become the ids.)
    (f"12345_67890_111_222_{FIRST}.ipynb", "canvas", None, "12345", "12345", f"111_222_{FIRST}.ipynb"),
    (f"Alice Smith - Bob Jones - {FIRST}.ipynb", "classroom", None, "Alice-Smith", "", f"Bob Jones - {FIRST}.ipynb"),
    (f"alice_bob_{FIRST}.ipynb", "folders", None, "alice", "", f"alice_bob_{FIRST}.ipynb"),
]


@pytest.mark.parametrize(("name", "layout", "forced", "student", "lms_id", "file_name"), CRAFTED,
                         ids=[c[1] + str(i) for i, c in enumerate(CRAFTED)])
def test_the_file_name_a_student_chose_never_changes_whose_notebook_it_is(name, layout, forced, student, lms_id,
                                                                           file_name):
    found_layout, entries = recognised(name, forced=forced)
    assert found_layout == layout, f"{name!r} was read as {found_layout}, not {layout}"
    (entry,) = entries[name]
    assert (entry.student, entry.lms_id, entry.file_name) == (student, lms_id, file_name), \
        f"the student's own file name changed whose notebook {name!r} is: {entry}"
    if layout == "blackboard":
        assert entry.attempt == ("2024-03-01-10-00-00",), f"the attempt date came from the student's file name: {entry}"


def test_in_the_nbgrader_layout_and_gradescope_the_student_is_a_folder_the_file_name_cannot_change(tmp_path):
    layout, entries = recognised(f"alice/{FIRST}/{FIRST}.ipynb", f"bob/{FIRST}/{FIRST}.ipynb",
                                 f"alice/{FIRST}/bob_{FIRST}.txt")
    assert layout == "nbgrader" and entries[f"alice/{FIRST}/bob_{FIRST}.txt"][0].student == "alice"
    (tmp_path / gradescope_export.GRADESCOPE_METADATA).write_text(
        "submission_101:\n  :submitters:\n  - :name: Alice Smith\n    :sid: '1001'\n")
    read = lms.LAYOUTS["gradescope"].reader(tmp_path, lms.DEFAULT_STUDENT_PATTERN)
    name = PurePosixPath(f"submission_101/submission_102_{FIRST}.ipynb")
    assert [(e.student, e.lms_id) for e in read(name)] == [("Alice-Smith", "1001")]


def test_a_canvas_name_without_a_name_part_is_read_from_its_ids():
    late = f"LATE_12345_67890_{FIRST}.ipynb"
    assert recognised(late)[1][late] == [lms.Entry("12345", "12345", f"{FIRST}.ipynb", attempt=(67890, 0), late=True)]
