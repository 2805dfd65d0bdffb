"""Exports as LMSs write them, in; gradebooks as LMSs read them, out (issue 11).

Each fixture follows the system's own naming (see autograde/intake/lms.py for the
schemes and where they come from). Whose notebook is which is proven on what
:func:`autograde.intake.collect.collect` returns, and a gradebook copy on what
:func:`autograde.gradebook.fill` writes from a scores.csv that the grader's own
writer makes for what was collected (:func:`grades_table`): milliseconds, no
kernel. One export goes through the whole command, ``python -m autograde grade``,
to the filled gradebook (:func:`test_canvas_export_to_canvas_gradebook`), so
that the pieces are proven to be wired together.

Most notebooks here are cheap stand-ins that tell by their bytes which file was
collected: an empty file, or one that is not JSON.
"""
import logging
import os
import struct
import zipfile
import zlib
from pathlib import Path

import nbformat
import pytest

from autograde import gradebook
from autograde.course import assignment_ids
from autograde.intake.collect import Collected, collect
from autograde.pages.feedback import write_feedback
from autograde.results.classify import CellResult, Status, graded_cells, same_for_all
from autograde.results.outputs import write_csvs
from tests.support.commands import grade_command, grades_by_student, read_rows, write_zip
from tests.support.synthetic import completed_notebook, student_notebook

FIRST = assignment_ids()[0]
EMPTY, BROKEN = "", "this is not JSON"
REFERENCE = nbformat.writes(completed_notebook(FIRST))


@pytest.fixture
def log(caplog):
    """What the package logs from INFO up (the command shows it on stderr), also where its logger does not pass
    records on to the root logger (the command's own logging setup stops that)."""
    package = logging.getLogger("autograde")
    package.addHandler(caplog.handler)
    with caplog.at_level(logging.INFO, logger="autograde"):
        yield caplog
    package.removeHandler(caplog.handler)


def collected(tmp_path, files, *, dates=None, name="export.zip", assignments=(FIRST,), **options) -> Collected:
    """What :func:`collect` finds in a zip of `files` (name -> content), as the command calls it for a run into
    ``tmp_path/out`` (`assignments`: what --assignment names, else every assignment of the course)."""
    archive = write_zip(tmp_path / name, files, dates)
    return collect(archive, tmp_path / "out" / "submitted", list(assignments), **options)


def handed_in(found: Collected, student: str, assignment: str = FIRST) -> str:
    """The text of the notebook collected as `student`'s `assignment` (the one that is graded)."""
    assert (student, assignment) in found.submissions, f"no notebook of {student} was collected: {found.unmatched}"
    return found.submissions[(student, assignment)].read_text()


def unmatched(found: Collected) -> dict[str, str]:
    """The files not graded, and why (unmatched.csv)."""
    return {u.path: u.reason for u in found.unmatched}


def lms_ids(found: Collected) -> dict[str, str]:
    """Every student's LMS user id, as grades.csv's column lms_user_id gives it (empty where none)."""
    return {s: found.lms_ids.get(s, "") for s in found.students}


def grades_table(found: Collected, out: Path, assignments: list[str] | None = None) -> list[CellResult]:
    """Write scores.csv and grades.csv into `out` with the grader's own writer, for what `found` holds, as a run
    would grade it: every student gets rows for each assignment (those named, else those handed in); the
    reference notebook gets full marks, any other stand-in the error rows of a file that is not a notebook, and
    a student without a notebook missing rows (what grading them gives: test_grading.py). Returns the rows."""
    chosen = assignments or sorted({a for _, a in found.submissions})
    rows = []
    for student in found.students:
        for assignment in chosen:
            notebook = found.submissions.get((student, assignment))
            if notebook is None:
                rows += same_for_all(student, assignment, Status.MISSING, f"no notebook for {assignment}")
            elif notebook.read_text() == nbformat.writes(completed_notebook(assignment)):
                rows += [CellResult(student, assignment, grade_id, points, points, Status.PASSED, "")
                         for grade_id, points in graded_cells(assignment)]
            else:
                rows += same_for_all(student, assignment, Status.ERROR, "the submitted file is not a notebook")
    write_csvs(rows, out, found.lms_ids)
    return rows


def filled_from(found: Collected, export: Path, out: Path, missing: str = "blank",
                assignments: list[str] | None = (FIRST,)) -> gradebook.Filled:
    """The gradebook `export` filled as the command fills it (--gradebook; `assignments`: what --assignment named)
    from the grades of what `found` holds."""
    grades_table(found, out, list(assignments) if assignments else None)
    return gradebook.fill(export, out / "scores.csv", out, missing, None, list(assignments) if assignments else None)


# The export itself: dates, wrappers, scratch, hostile archives ------------------------------------------------

def test_the_newest_notebook_in_a_zip_is_the_one_the_archive_dates_newest_and_a_wrapping_folder_is_no_student(
        tmp_path, log):
    # Listed newest first: extracting in order would make the older file the last written.
    files = {"export/alice_01-weighted-sum (1).ipynb": EMPTY, "export/alice_01-weighted-sum.ipynb": BROKEN,
             "export/bob_01-weighted-sum.ipynb": BROKEN}
    dates = {"export/alice_01-weighted-sum (1).ipynb": (2024, 3, 2, 9, 0, 0),
             "export/alice_01-weighted-sum.ipynb": (2024, 3, 1, 9, 0, 0)}
    found = collected(tmp_path, files, dates=dates)
    assert found.students == ["alice", "bob"]
    assert handed_in(found, "alice") == EMPTY, "the older of alice's two notebooks was collected"
    assert "newer: alice_01-weighted-sum (1).ipynb" in unmatched(found)["export/alice_01-weighted-sum.ipynb"]
    assert "'export/' as a wrapper" in log.text


def test_each_run_reads_only_its_own_export(tmp_path):
    # Two runs into one output folder: the second must not see the first's extracted files.
    run = tmp_path / "out"
    first = write_zip(tmp_path / "first.zip", {"alice_01-weighted-sum.ipynb": BROKEN})
    second = write_zip(tmp_path / "second.zip", {"bob_01-weighted-sum.ipynb": BROKEN})
    for export in (first, second):
        found = collect(export, run / "submitted", assignment_ids())
    assert found.students == ["bob"] and list(found.submissions) == [("bob", FIRST)], found
    assert [p.name for p in run.iterdir()] == ["submitted"], "a scratch folder of the extraction was left behind"


def test_a_hostile_archive_writes_nothing_outside_and_every_refused_entry_is_listed(tmp_path):
    outside = tmp_path / f"absolute-{os.getpid()}"
    files = {"alice_01-weighted-sum.ipynb": BROKEN, "../escaped_01-weighted-sum.ipynb": BROKEN,
             # A sibling whose name starts like the extraction folder's: a string-prefix check lets it out.
             "../unzipped-x/sibling_01-weighted-sum.ipynb": BROKEN,
             f"{outside}/absolute_01-weighted-sum.ipynb": BROKEN}
    archive = write_zip(tmp_path / "hostile.zip", files)
    with zipfile.ZipFile(archive, "a") as z:
        link = zipfile.ZipInfo("link_01-weighted-sum.ipynb")
        link.external_attr = 0o120777 << 16  # a symbolic link to a file outside
        z.writestr(link, "/etc/hostname")
    found = collect(archive, tmp_path / "out" / "submitted", assignment_ids())
    assert found.students == ["alice"]
    reasons = unmatched(found)
    for name in list(files)[1:] + ["link_01-weighted-sum.ipynb"]:
        assert reasons[name].startswith("refused"), (name, reasons)
    written = [p for p in Path(tmp_path).parent.rglob("*") if p.name.startswith(("escaped", "sibling", "absolute_"))]
    assert written == [] and not outside.exists()


def zip_bomb(path: Path, entries: int = 5, size: int = 2**30) -> Path:
    """A genuine zip of `entries` files of `size` zero bytes each, a few MiB on disk.

    Deflating a chunk after a full flush gives the same bytes every time, so a
    stream of many chunks is one compressed chunk repeated.
    """
    chunk = bytes(2**24)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = deflate.compress(chunk) + deflate.flush(zlib.Z_FULL_FLUSH)
    stream = block * (size // len(chunk)) + deflate.flush()
    crc = 0
    for _ in range(size // len(chunk)):
        crc = zlib.crc32(chunk, crc)
    central = b""
    with open(path, "wb") as f:
        for i in range(entries):
            name, offset = f"student{i}_01-weighted-sum.ipynb".encode(), f.tell()
            f.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0x5821, crc, len(stream), size, len(name), 0)
                    + name + stream)
            central += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 0x5821, crc, len(stream), size,
                                   len(name), 0, 0, 0, 0, 0, offset) + name
        start = f.tell()
        f.write(central + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, entries, entries, len(central), start, 0))
    return path


def test_a_zip_bomb_is_refused_with_a_clear_message_before_anything_is_extracted(tmp_path):
    bomb = zip_bomb(tmp_path / "bomb.zip")
    with zipfile.ZipFile(bomb) as z:  # it is what it claims: GiBs of zeros from a few MiB
        assert sum(m.file_size for m in z.infolist()) == 5 * 2**30 and bomb.stat().st_size < 10 * 2**20
        with z.open(z.infolist()[0]) as member:
            assert member.read(2**20) == bytes(2**20)
    # (The command shows a ValueError's message with exit status 2:
    # test_trust.py::test_a_failed_rerun_keeps_the_last_runs_results_and_a_good_one_reuses_them.)
    with pytest.raises(ValueError) as refused:
        collect(bomb, tmp_path / "out" / "submitted", assignment_ids())
    message = str(refused.value)
    assert "refusing to extract" in message and "zip bomb" in message and "5.0 GiB" in message, message
    assert sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file() and p != bomb) < 2**20


# LMS layouts in ------------------------------------------------------------------------------------------------

def test_blackboard_attempts_order_by_their_dates_and_receipts_are_listed(tmp_path):
    first, second = "2024-03-01-10-00-00", "2024-03-02-09-30-00"
    files = {f"Homework 01_asmith_attempt_{first}_01-weighted-sum.ipynb": BROKEN,
             f"Homework 01_asmith_attempt_{first}.txt": "Name: Alice Smith (asmith)",
             f"Homework 01_asmith_attempt_{second}_01-weighted-sum.ipynb": EMPTY,
             f"Homework 01_asmith_attempt_{second}.txt": "Name: Alice Smith (asmith)",
             # The file name names no assignment; Blackboard's assignment name does.
             f"Homework 01_bjones_attempt_{first}_my notebook.ipynb": BROKEN}
    # The archive dates the first attempt later: the attempt date in the name decides.
    dates = {f"Homework 01_asmith_attempt_{first}_01-weighted-sum.ipynb": (2024, 3, 5, 0, 0, 0)}
    found = collected(tmp_path, files, dates=dates)
    assert found.layout == "Blackboard"
    assert lms_ids(found) == {"asmith": "asmith", "bjones": "bjones"}
    assert handed_in(found, "asmith") == EMPTY and handed_in(found, "bjones") == BROKEN
    reasons = unmatched(found)
    assert "is newer" in reasons[f"Homework 01_asmith_attempt_{first}_01-weighted-sum.ipynb"]
    assert reasons[f"Homework 01_asmith_attempt_{second}.txt"] == "not a notebook (.ipynb)"


def test_forcing_a_layout_reads_the_export_with_its_naming(tmp_path):
    files = {"Homework 01_asmith_attempt_2024-03-01-10-00-00_01-weighted-sum.ipynb": BROKEN}
    found = collected(tmp_path, files, lms_name="canvas")
    assert found.layout == "Canvas"
    assert "does not follow Canvas's naming" in unmatched(found)[next(iter(files))]


def test_google_classroom_copies_in_a_drive_folder(tmp_path):
    files = {"Homework 01/Alice Smith - 01-weighted-sum.ipynb": EMPTY,
             "Homework 01/Bob Jones - Copy of 01-weighted-sum.ipynb": BROKEN}
    found = collected(tmp_path, files, name="Homework 01-20240301T100000Z-001.zip")
    assert found.layout == "Google Classroom"
    assert lms_ids(found) == {"Alice-Smith": "", "Bob-Jones": ""}
    assert handed_in(found, "Alice-Smith") == EMPTY and handed_in(found, "Bob-Jones") == BROKEN


GRADESCOPE_METADATA = """\
submission_101:
  :submitters:
  - :name: Alice Smith
    :sid: '1001'
    :email: alice@example.edu
  :created_at: 2024-03-01 10:00:00.000000000 +01:00
  :score: 0.0
  :status: processed
submission_102:
  :submitters:
  - :name: Bob Jones
    :sid: '1002'
    :email: bob@example.edu
  - :name: Carol White
    :sid: '1003'
    :email: carol@example.edu
  :created_at: 2024-03-01 11:00:00.000000000 +01:00
  :score: 0.0
  :status: processed
"""


def test_gradescope_submissions_belong_to_each_submitter(tmp_path):
    files = {"assignment_4242_export/submission_metadata.yml": GRADESCOPE_METADATA,
             "assignment_4242_export/submission_101/01-weighted-sum.ipynb": EMPTY,
             "assignment_4242_export/submission_102/01-weighted-sum.ipynb": BROKEN}
    found = collected(tmp_path, files)
    assert found.layout == "Gradescope"
    assert lms_ids(found) == {"Alice-Smith": "1001", "Bob-Jones": "1002", "Carol-White": "1003"}
    assert handed_in(found, "Alice-Smith") == EMPTY
    assert handed_in(found, "Bob-Jones") == BROKEN == handed_in(found, "Carol-White")


def test_nbgrader_layout_in_a_zip(tmp_path):
    files = {f"alice/{FIRST}/{FIRST}.ipynb": EMPTY, f"alice/{FIRST}/timestamp.txt": "2024-03-01 10:00:00",
             f"bob/{FIRST}/{FIRST}.ipynb": BROKEN}
    found = collected(tmp_path, files)
    assert found.layout == "nbgrader"
    assert found.students == ["alice", "bob"]
    assert handed_in(found, "alice") == EMPTY and handed_in(found, "bob") == BROKEN


def test_an_unrecognised_export_says_what_it_saw_and_what_to_pass(tmp_path):
    files = {"alice-hw01.ipynb": BROKEN, "bob-hw01.ipynb": BROKEN}
    # (The command shows a ValueError's message with exit status 2:
    # test_trust.py::test_a_failed_rerun_keeps_the_last_runs_results_and_a_good_one_reuses_them.)
    with pytest.raises(ValueError) as refused:
        collected(tmp_path, files)
    message = str(refused.value)
    assert "alice-hw01.ipynb" in message and "--student-pattern" in message and "--lms" in message, message
    found = collected(tmp_path, files, student_pattern="^(?P<student>[^-]+)-")
    assert found.students == ["alice", "bob"]


# Gradebooks out ------------------------------------------------------------------------------------------------

CANVAS_GRADEBOOK = """\
Student,ID,SIS User ID,SIS Login ID,Section,01 Weighted sum (5501),Quiz 1 (5502),Current Score,Final Score
    Points Possible,,,,,10.00,5.00,(read only),(read only)
"Smith, Alice",12345,S001,asmith,Section A,,4.00,80.00,80.00
"Jones, Bob",12346,S002,bjones,Section A,,3.00,60.00,60.00
"White, Carol",12347,S003,cwhite,Section A,,5.00,100.00,100.00
"""


@pytest.mark.slow
@pytest.mark.sandbox
def test_canvas_export_to_canvas_gradebook(tmp_path):
    # The whole command, once: an LMS export zip in, real notebooks graded in the sandbox, the gradebook copy out.
    untouched = nbformat.writes(student_notebook(FIRST))
    files = {"smithalice_12345_900001_01-weighted-sum.ipynb": BROKEN,  # replaced by a later upload
             "smithalice_12345_900020_01-weighted-sum-1.ipynb": REFERENCE,
             "jonesbob_LATE_12346_900005_01-weighted-sum.ipynb": untouched,
             "jonesbob_LATE_12346_900006_notes.pdf": "%PDF",
             "leedave_12348_900007_01-weighted-sum.ipynb": BROKEN}  # not in the gradebook
    dates = {"smithalice_12345_900001_01-weighted-sum.ipynb": (2024, 3, 9, 0, 0, 0)}  # the name decides, not this
    (tmp_path / "gradebook.csv").write_text(CANVAS_GRADEBOOK)
    out = tmp_path / "out"
    export = write_zip(tmp_path / "cs101-01-weighted-sum_submissions.zip", files, dates)
    proc = grade_command(export, out, "--assignment", FIRST, "--jobs", "1",
                         "--gradebook", str(tmp_path / "gradebook.csv"))
    assert proc.returncode == 0, proc.stderr
    assert "recognised the export's layout: Canvas" in proc.stderr
    grades = grades_by_student(out)
    assert {s: r["lms_user_id"] for s, r in grades.items()} == {"smithalice": "12345", "jonesbob": "12346",
                                                                 "leedave": "12348"}
    assert float(grades["smithalice"]["score"]) == float(grades["smithalice"]["max_score"]) > 0
    assert any("marked this submission late" in r["note"] for r in read_rows(out / "notes.csv")
               if r["student_id"] == "jonesbob" and r["lms_user_id"] == "12346")
    assert "LMS user id: 12346" in (out / "feedback" / "jonesbob.html").read_text()
    assert {r["lms_user_id"] for r in read_rows(out / "scores.csv") if r["student_id"] == "smithalice"} == {"12345"}

    exported = read_rows(tmp_path / "gradebook.csv")
    filled = read_rows(out / "gradebook-import.csv")
    column = "01 Weighted sum (5501)"
    assert [{k: v for k, v in r.items() if k != column} for r in filled] == \
           [{k: v for k, v in r.items() if k != column} for r in exported]  # nothing else changed
    by_id = {r["ID"]: r[column] for r in filled}
    bob = grades["jonesbob"]
    assert float(by_id["12345"]) == 10  # full marks, on Canvas's 10 points
    assert float(by_id["12346"]) == pytest.approx(10 * float(bob["score"]) / float(bob["max_score"]), abs=0.006)
    assert by_id["12347"] == ""  # nothing handed in; blank by default
    assert filled[0][column] == "10.00"  # the Points Possible row is kept
    absent = read_rows(out / "not_in_gradebook.csv")
    assert [(r["student_id"], r["lms_user_id"]) for r in absent] == [("leedave", "12348")]
    assert "leedave (12348)" in proc.stdout and "gradebook-import.csv" in proc.stdout


MOODLE_WORKSHEET = """\
Identifier,Full name,Email address,Status,Grade,Maximum grade,Grade can be changed,Last modified (submission),\
Last modified (grade),Feedback comments
Participant 123456,Alice Smith,alice@example.edu,Submitted for grading,,100.00,Yes,"Friday, 1 March 2024, 10:00 AM",-,
Participant 123457,Bob Jones,bob@example.edu,Submitted for grading,,100.00,Yes,"Friday, 1 March 2024, 11:00 AM",-,
Participant 123458,Carol White,carol@example.edu,No submission,,100.00,Yes,-,-,
"""


def test_moodle_export_to_moodle_grading_worksheet_with_zero_for_nothing_handed_in(tmp_path):
    files = {"Alice Smith_123456_assignsubmission_file_/01-weighted-sum.ipynb": REFERENCE,
             "Bob Jones_123457_assignsubmission_file_/homework 01.ipynb": BROKEN,
             "Carol White_123458_assignsubmission_onlinetext_/onlinetext.html": "<p>I could not do it</p>"}
    (tmp_path / "worksheet.csv").write_text(MOODLE_WORKSHEET)
    found = collected(tmp_path, files, name="CS101-Homework 01-5501.zip")
    assert found.layout == "Moodle"
    assert lms_ids(found) == {"Alice-Smith": "123456", "Bob-Jones": "123457", "Carol-White": "123458"}
    assert handed_in(found, "Alice-Smith") == REFERENCE and handed_in(found, "Bob-Jones") == BROKEN
    assert ("Carol-White", FIRST) not in found.submissions  # a student with nothing handed in (missing rows)
    filled_from(found, tmp_path / "worksheet.csv", tmp_path / "out", missing="zero")
    filled = {r["Identifier"]: r["Grade"] for r in read_rows(tmp_path / "out" / "gradebook-import.csv")}
    assert filled == {"Participant 123456": "100", "Participant 123457": "0", "Participant 123458": "0"}
    assert read_rows(tmp_path / "out" / "not_in_gradebook.csv") == []


TWO_COLUMNS = """\
Student,ID,SIS User ID,SIS Login ID,Section,01 Weighted sum (5501),02 Additive attention (5502),Current Score
    Points Possible,,,,,10.00,10.00,(read only)
"Smith, Alice",12345,S001,asmith,Section A,,9.00,90.00
"Jones, Bob",12346,S002,bjones,Section A,,8.00,80.00
"""


def test_a_stray_notebook_of_another_assignment_never_changes_its_gradebook_column(tmp_path):
    second = assignment_ids()[1]
    files = {"smithalice_12345_900001_01-weighted-sum.ipynb": BROKEN,
             f"smithalice_12345_900002_{second}.ipynb": BROKEN}  # handed in by mistake: graded 0 if graded
    (tmp_path / "gradebook.csv").write_text(TWO_COLUMNS)
    out = tmp_path / "out"
    # No --assignment: both notebooks are graded, and which column to fill is not guessed.
    found = collected(tmp_path, files, assignments=assignment_ids())
    assert set(found.submissions) == {("smithalice", FIRST), ("smithalice", second)}
    with pytest.raises(ValueError) as refused:
        filled_from(found, tmp_path / "gradebook.csv", out, missing="zero", assignments=None)
    assert "--assignment" in str(refused.value), refused.value
    assert not (out / "gradebook-import.csv").exists()
    # --assignment 01-weighted-sum: that column only.
    found = collected(tmp_path, files)
    filled = filled_from(found, tmp_path / "gradebook.csv", out, missing="zero")
    rows = read_rows(out / "gradebook-import.csv")
    assert [r["02 Additive attention (5502)"] for r in rows] == ["10.00", "9.00", "8.00"]
    assert [r["01 Weighted sum (5501)"] for r in rows] == ["10.00", "0", "0"]
    assert filled.changed == {"01 Weighted sum (5501)": 2}, filled.changed  # (the command prints this)


def test_a_student_id_that_reads_as_a_formula_is_escaped_in_every_csv_and_still_fills_the_gradebook(tmp_path):
    files = {"=1+2_12345_900001_01-weighted-sum.ipynb": BROKEN,  # a Canvas name a spreadsheet would run
             "jonesbob_12346_900002_01-weighted-sum.ipynb": BROKEN}
    (tmp_path / "gradebook.csv").write_text(CANVAS_GRADEBOOK)
    out = tmp_path / "out"
    found = collected(tmp_path, files)
    assert found.layout == "Canvas" and found.students == ["=1+2", "jonesbob"], found.students
    rows = grades_table(found, out, [FIRST])
    for name in ("scores.csv", "grades.csv"):
        ids = {r["student_id"] for r in read_rows(out / name)}
        assert ids == {"'=1+2", "jonesbob"}, f"{name}: {ids}"
    gradebook.fill(tmp_path / "gradebook.csv", out / "scores.csv", out, "blank", None, [FIRST])
    filled = {r["ID"]: r["01 Weighted sum (5501)"] for r in read_rows(out / "gradebook-import.csv")}
    assert filled["12345"] == "0" and filled["12346"] == "0", filled  # (found by Canvas user id)
    write_feedback(rows, out / "feedback", {}, found.lms_ids)
    assert (out / "feedback" / "=1+2.html").is_file()


def test_a_renamed_notebook_in_the_nbgrader_layout_is_collected_as_that_students(tmp_path):
    # The others kept the exact name; Colab's download of a Drive copy is "Copy of <a>.ipynb".
    files = {f"alice/{FIRST}/{FIRST}.ipynb": BROKEN, f"bob/{FIRST}/{FIRST}.ipynb": BROKEN,
             f"carol/{FIRST}/Copy of {FIRST}.ipynb": REFERENCE}
    found = collected(tmp_path, files)
    assert found.layout == "nbgrader"
    assert handed_in(found, "carol") == REFERENCE, "carol's renamed notebook was not collected as her notebook"
    assert unmatched(found) == {}


def test_a_moodle_file_named_like_another_participants_entry_never_changes_their_grade(tmp_path):
    # Red team, issue 19 (hole 3): alice's extra file, named x_222_assignsubmission_file_..., was read as participant
    # 222's, and the gradebook kept the first grade per participant: Bob's row got alice's garbage grade.
    files = {"Alice Smith_123456_assignsubmission_file_01-weighted-sum.ipynb": BROKEN,
             "Alice Smith_123456_assignsubmission_file_x_123457_assignsubmission_file_01-weighted-sum.ipynb": BROKEN,
             "Bob Jones_123457_assignsubmission_file_01-weighted-sum.ipynb": REFERENCE}
    (tmp_path / "worksheet.csv").write_text(MOODLE_WORKSHEET)
    found = collected(tmp_path, files)
    assert found.layout == "Moodle"
    assert lms_ids(found) == {"Alice-Smith": "123456", "Bob-Jones": "123457"}, lms_ids(found)
    filled_from(found, tmp_path / "worksheet.csv", tmp_path / "out", missing="zero")
    filled = {r["Identifier"]: r["Grade"] for r in read_rows(tmp_path / "out" / "gradebook-import.csv")}
    assert filled == {"Participant 123456": "0", "Participant 123457": "100", "Participant 123458": "0"}, filled
    assert read_rows(tmp_path / "out" / "not_in_gradebook.csv") == []


def test_one_canvas_user_id_under_two_names_grades_neither_and_says_so(tmp_path, log):
    # However two names came to carry one user id, neither notebook is that user's grade: both are listed, the
    # screen says NOT GRADED, and the user's gradebook cell stays as exported (no cell filled first-wins).
    files = {"jonesbob_12346_900001_01-weighted-sum.ipynb": EMPTY,
             "smithalice_12346_900002_01-weighted-sum.ipynb": BROKEN,
             "smithalice_12345_900003_01-weighted-sum.ipynb": BROKEN}
    (tmp_path / "gradebook.csv").write_text(CANVAS_GRADEBOOK)
    found = collected(tmp_path, files)
    assert found.layout == "Canvas"
    assert lms_ids(found) == {"smithalice": "12345"}, lms_ids(found)
    reasons = unmatched(found)
    for name in list(files)[:2]:
        assert "'12346'" in reasons.get(name, "") and reasons[name].startswith("refused"), reasons
    warnings = [r.getMessage() for r in log.records if r.levelno >= logging.WARNING]
    assert any("NOT GRADED" in w and "12346" in w for w in warnings), warnings
    filled_from(found, tmp_path / "gradebook.csv", tmp_path / "out")
    filled = {r["ID"]: r["01 Weighted sum (5501)"] for r in read_rows(tmp_path / "out" / "gradebook-import.csv")}
    assert filled["12346"] == "" and filled["12345"] == "0", filled
