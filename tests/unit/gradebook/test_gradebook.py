"""The gradebook copy and the CSVs the grader writes, without grading (issue 19: instructor data is never lost or
changed by surprise): untouched cells come back byte for byte, only the run's own assignments' columns change, and
no cell the grader writes can become a spreadsheet formula."""
import csv
import io

import pytest

from autograde import gradebook
from autograde.course import assignment_ids
from autograde.intake.collect import Unmatched, write_unmatched
from autograde.results.classify import CellResult, Status
from autograde.results.outputs import write_csvs, write_notes

FIRST, SECOND = assignment_ids()[:2]
COLUMN, OTHER = "01 Weighted sum (5501)", "02 Additive attention (5502)"


def scores_csv(path, rows):
    """A scores.csv of (student, lms id, assignment, score, max_score, status) rows."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student_id", "lms_user_id", "assignment", "grade_id", "score", "max_score", "status",
                         "message"])
        for student, lms_id, assignment, score, max_score, status in rows:
            writer.writerow([student, lms_id, assignment, "test_x", score, max_score, status, ""])
    return path


# The grade cells are {A} (alice, 12345) and {B} (bob, 12346) in the first column; everything else must come back
# byte for byte: CRLF endings, a UTF-8 BOM, newlines and doubled quotes inside quoted cells (Moodle's feedback
# comments), quotes where none are needed, a quoted empty cell, spaces around values, non-ASCII names.
CANVAS = (
    '\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,' + COLUMN + ',' + OTHER + ',"Notes"\r\n'
    '    Points Possible,,,,,10.00,"20.00",(read only)\r\n'
    '"Smith, Alice",12345,S001,asmith,"Section A",{A},"7.5","first line\r\nsecond line\nthird ""quoted"" line"\r\n'
    '"Jones, Bob","12346",S002,bjones, Section B ,{B},,""\r\n'
    'Ødegård Åse,12347,S003,aodegard,Section A,"",5,=1+1\r\n'
    '\r\n'
    'Test Student,99999,,,,,,"trailing\r\n"'
)


def fill(tmp_path, text, rows, **kwargs):
    (tmp_path / "gb.csv").write_bytes(text.encode())
    scores = scores_csv(tmp_path / "scores.csv", rows)
    filled = gradebook.fill(tmp_path / "gb.csv", scores, tmp_path, **kwargs)
    return filled, (tmp_path / gradebook.IMPORT_FILE).read_bytes()


def test_every_untouched_cell_of_the_gradebook_comes_back_byte_identical(tmp_path):
    rows = [("smithalice", "12345", FIRST, 4, 5, "passed"), ("jonesbob", "12346", FIRST, 1, 5, "failed")]
    filled, written = fill(tmp_path, CANVAS.format(A="", B='""'), rows, assignments=[FIRST])
    expected = CANVAS.format(A="8", B="2").encode()
    assert written == expected, f"the copy differs from the export beyond the two grade cells:\n{written!r}\n" \
                                f"expected\n{expected!r}"
    assert filled.columns == {FIRST: COLUMN}


def test_the_gradebook_is_read_as_the_csv_module_reads_it(tmp_path):
    # (The values the copy is filled from are the csv module's, newline="", so matching sees the real cells.)
    text = CANVAS.format(A="", B="")
    rows, _ = gradebook._read_bytes(text.encode())
    # (A blank line is one empty cell here and no cell for the csv module: both are no student.)
    expected = [r for r in csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline="")) if r]
    assert [r for r in rows if r != [""]] == expected


def test_only_the_runs_assignment_is_filled_and_several_need_a_choice(tmp_path):
    text = CANVAS.format(A="", B="")
    rows = [("smithalice", "12345", FIRST, 5, 5, "passed"),
            ("smithalice", "12345", SECOND, 0, 10, "failed"),  # a stray notebook of the second assignment
            ("jonesbob", "12346", SECOND, 0, 10, "missing")]
    filled, written = fill(tmp_path, text, rows, assignments=[FIRST], missing="zero")
    after = list(csv.reader(io.StringIO(written.decode("utf-8-sig"), newline="")))
    before = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline="")))
    other = before[0].index(OTHER)
    assert [r[other] for r in after[1:] if len(r) > other] == [r[other] for r in before[1:] if len(r) > other], \
        "the column of an assignment the run was not for changed"
    assert filled.columns == {FIRST: COLUMN}
    # Alice's grade, and 0 for the three with nothing handed in for it (Bob, Åse, the test student).
    assert filled.changed == {COLUMN: 4}, filled.changed
    with pytest.raises(ValueError, match="--assignment"):
        fill(tmp_path, text, rows)
    # Named on the command line, several are filled.
    filled, _ = fill(tmp_path, text, rows, assignments=[FIRST, SECOND])
    assert filled.columns == {FIRST: COLUMN, SECOND: OTHER}


FORMULAS = ["=HYPERLINK(\"http://x\",\"y\")", "+1", "-2+3", "@SUM(A1)", "\tx", "\rx"]


def first_characters(path):
    with open(path, newline="") as f:
        return [cell[:1] for row in csv.reader(f) for cell in row if cell]


@pytest.mark.parametrize("formula", FORMULAS)
def test_no_cell_the_grader_writes_starts_a_formula(tmp_path, formula):
    row = CellResult(formula, FIRST, "test_x", 0.0, 1.0, Status.FAILED, formula)
    write_csvs([row], tmp_path, {formula: formula})
    write_notes({(formula, FIRST): [formula]}, tmp_path / "notes.csv", {formula: formula})
    write_unmatched([Unmatched(formula, formula)], tmp_path / "unmatched.csv")
    for name in ("scores.csv", "grades.csv", "notes.csv", "unmatched.csv"):
        starts = first_characters(tmp_path / name)
        assert not set(starts) & {"=", "+", "-", "@", "\t", "\r"}, f"{name} has a cell starting a formula: {starts}"
        with open(tmp_path / name, newline="") as f:
            assert "'" + formula in [cell for row in csv.reader(f) for cell in row], f"{name} lost the text"


def test_grades_of_an_escaped_student_id_still_reach_the_gradebook(tmp_path):
    # (scores.csv keeps the id escaped; reading it back undoes that, so the student is still found.)
    write_csvs([CellResult("-dash", FIRST, "t", 1.0, 2.0, Status.PASSED, "")], tmp_path, {"-dash": "777"})
    grades = gradebook.read_grades(tmp_path / "scores.csv")
    assert list(grades[FIRST]) == ["-dash"] and grades[FIRST]["-dash"].lms_id == "777"
    assert grades[FIRST]["-dash"].score == 1.0


def test_the_gradebook_import_reads_the_final_score_grades_csv_gives(tmp_path):
    # One final score, written once (grades.csv's score, after the late penalty and however it was computed or
    # adjusted by hand): the import never recomputes it from scores.csv with a clamp of its own.
    write_csvs([CellResult("ann", FIRST, "t", 3.0, 4.0, Status.PASSED, ""),
                CellResult("ann", FIRST, "u", 5.0, 6.0, Status.PASSED, "")], tmp_path, {"ann": "7"})
    totals = tmp_path / "grades.csv"
    rows = list(csv.DictReader(totals.open(newline="")))
    rows[0].update(score="6.5", late_penalty="2.0", raw_score="8.0")  # (8 - 2, raised by half a point by hand)
    with totals.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    grade = gradebook.read_grades(tmp_path / "scores.csv")[FIRST]["ann"]
    assert (grade.score, grade.max_score, grade.handed_in) == (6.5, 10.0, True), grade


MOODLE = (
    "Identifier,Full name,Email address,Status,Grade,Maximum grade,Feedback comments\n"
    'Participant 123456,Alice Smith,alice@example.edu,Submitted,{A},100.00,"Good work.\nSee me about\n""softmax"""\n'
    "Participant 123457,Bob Jones,bob@example.edu,No submission,,100.00,'quoted' 'text'\n"
)


def test_a_moodle_worksheet_with_multi_line_comments_and_lf_endings_comes_back_as_it_was(tmp_path):
    rows = [("Alice-Smith", "123456", FIRST, 3, 4, "passed")]
    filled, written = fill(tmp_path, MOODLE.format(A=""), rows)  # (one assignment graded: no choice needed)
    assert written == MOODLE.format(A="75").encode(), written
    assert filled.changed == {"Grade": 1}


@pytest.mark.parametrize("header", [
    "ID,Vollständiger Name,E-Mail-Adresse,Status,Bewertung,Bestwertung,Feedback als Kommentar",  # German Moodle
    "Identifiant,Nom complet,Adresse de courriel,Statut,Note,Note maximale,Commentaires",  # French
    "Identificador,Nombre completo,Dirección Email,Estatus,Calificación,Calificación máxima,Comentarios"])  # Spanish
def test_a_moodle_worksheet_in_german_french_or_spanish_is_filled(tmp_path, header):
    # Moodle names the worksheet's columns in the teacher's language: read only in English, these were refused.
    text = (f"{header}\n" + MOODLE.split("\n", 1)[1]).replace("Participant", "Teilnehmer/in")
    rows = [("Alice-Smith", "123456", FIRST, 3, 4, "passed")]
    filled, written = fill(tmp_path, text.format(A=""), rows)
    assert written == text.format(A="75").encode(), written
    assert list(filled.changed.values()) == [1]


def test_two_students_with_one_lms_user_id_fill_no_cell_and_are_both_reported(tmp_path):
    # (Red team, issue 19: first-wins gave Bob's row the grade of a student id read from alice's file name.)
    rows = [("Alice-Smith-111-x", "12346", FIRST, 0, 5, "failed"), ("jonesbob", "12346", FIRST, 5, 5, "passed"),
            ("smithalice", "12345", FIRST, 4, 5, "passed")]
    filled, written = fill(tmp_path, CANVAS.format(A="", B='""'), rows, assignments=[FIRST], missing="zero")
    after = list(csv.reader(io.StringIO(written.decode("utf-8-sig"), newline="")))
    at = after[0].index(COLUMN)
    bob = next(r for r in after if r[:1] == ["Jones, Bob"])
    assert bob[at] == "", f"Bob's cell was filled ({bob[at]!r}) though two student ids claim his LMS id"
    assert next(r for r in after if r[:1] == ["Smith, Alice"])[at] == "8"
    assert sorted(s for s, _, _ in filled.conflicts) == ["Alice-Smith-111-x", "jonesbob"], filled.conflicts
    reported = {r["student_id"]: r for r in csv.DictReader(open(tmp_path / gradebook.ABSENT_FILE, newline=""))}
    assert {"Alice-Smith-111-x", "jonesbob"} <= set(reported), reported
    assert "12346" in reported["jonesbob"]["reason"], reported
