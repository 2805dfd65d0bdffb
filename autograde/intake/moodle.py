"""Moodle: its submissions export, its grading worksheet (with the submission times), its feedback zip.

- "Download all submissions": a folder ``{Full Name}_{participant id}_assignsubmission_file_`` per
  student (or flat ``..._assignsubmission_file_{file}`` files), where the participant id is the one the
  grading worksheet shows as ``Participant {id}`` (mod/assign ``download_submissions``).
- The grading worksheet ("Download grading worksheet"): columns ``Identifier`` (``Participant {id}``, the id in
  the submission folder names), ``Full name``, ``Email address``, ``Status``, ``Grade``, ``Maximum grade``, ... ;
  Moodle imports the ``Grade`` column by ``Identifier``. The times are its column ``Last modified (submission)``,
  ``Sunday, 1 March 2026, 10:10 PM`` (``strftimedaydatetime``, in the downloading teacher's time zone, which the
  file does not name); ``-`` where nothing was submitted.
- The feedback zip, for the assignment's *Upload multiple feedback files in a zip*: a folder
  ``<Full Name>_<participant id>_assignfeedback_file_`` per student holding ``feedback.pdf``. Moodle's importer
  (``mod/assign/feedback/file/importziplib.php``, ``is_valid_filename_for_import``) splits each path part at ``_``
  into at most 5 fields, reads the participant id from the second (numeric, one of the assignment's participants)
  and the plugin from the third and fourth (``assignfeedback``, ``file``); the rest of the path is the feedback
  file's name. Its own download names a student's folder ``<Full Name>_<participant id>_assignsubmission_file_``
  with ``_`` in the name replaced by spaces (``mod/assign/locallib.php``, ``download_submissions``), so the name
  must hold no ``_``: it is the one the export gave, with ``_`` made spaces.

The worksheet in the languages Moodle ships most (English, German, French, Spanish): it names its columns with
Moodle's language strings, in the teacher's language: ``recordid`` (Identifier), ``gradenoun``/``grade`` (Grade),
``maxgrade`` (Maximum grade), ``fullname``, ``email`` and ``lastmodifiedsubmission`` (Last modified (submission)),
as Moodle's language packs write them. Its dates follow the language's ``strftimedaydatetime`` ("Sunday, 1 March
2026, 10:10 PM"; German "Sonntag, 1. März 2026, 22:10"; French "dimanche 1 mars 2026, 22:10"; Spanish "domingo, 1 de
marzo de 2026, 22:10").
"""
from __future__ import annotations

import csv
import re
from datetime import datetime
from pathlib import Path, PurePosixPath

from . import gradesheet
from .adapter import Entry, FeedbackUpload, Filled, Gradebook, Layout, Reader, safe_id

MOODLE = "Moodle grading worksheet (Last modified (submission))"
MOODLE_COLUMN = "Last modified (submission)"
MOODLE_ZIP = "feedback-pdf.zip"  # Moodle's "Upload multiple feedback files in a zip"
MOODLE_FILE = "feedback.pdf"  # the name a Moodle student sees the feedback file under

# Each column the grader reads, by its English name, with its names in the other languages (lower case).
COLUMNS = {
    "identifier": ("identifier", "id", "identifiant", "identificador"),
    "grade": ("grade", "bewertung", "note", "calificación"),
    "maximum grade": ("maximum grade", "bestwertung", "note maximale", "calificación máxima"),
    "full name": ("full name", "vollständiger name", "nom complet", "nombre completo"),
    "email address": ("email address", "e-mail-adresse", "adresse de courriel", "dirección email",
                      "dirección de correo"),
    "last modified (submission)": ("last modified (submission)", "zuletzt geändert (abgabe)",
                                   "dernière modification (travail remis)", "última modificación (entrega)"),
}
_MONTHS = {
    **dict.fromkeys(("januar", "janvier", "enero"), "january"), **dict.fromkeys(("februar", "février", "febrero"),
                                                                                "february"),
    **dict.fromkeys(("märz", "mars", "marzo"), "march"), **dict.fromkeys(("avril", "abril"), "april"),
    **dict.fromkeys(("mai", "mayo"), "may"), **dict.fromkeys(("juni", "juin", "junio"), "june"),
    **dict.fromkeys(("juli", "juillet", "julio"), "july"), **dict.fromkeys(("août", "agosto"), "august"),
    **dict.fromkeys(("septembre", "septiembre"), "september"), **dict.fromkeys(("oktober", "octobre", "octubre"),
                                                                               "october"),
    **dict.fromkeys(("novembre", "noviembre"), "november"), **dict.fromkeys(("dezember", "décembre", "diciembre"),
                                                                            "december"),
}
_WEEKDAYS = {"montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag", "lundi", "mardi",
             "mercredi", "jeudi", "vendredi", "samedi", "dimanche", "lunes", "martes", "miércoles", "jueves",
             "viernes", "sábado", "domingo"}


def columns(header: list[str]) -> dict[str, int]:
    """The worksheet's columns the grader reads, by English name -> index in `header` (those present)."""
    lower = [h.strip().lower() for h in header]
    found = {}
    for name, names in COLUMNS.items():
        at = next((lower.index(n) for n in names if n in lower), None)
        if at is not None:
            found[name] = at
    return found


def is_worksheet(header: list[str]) -> bool:
    """Whether `header` is a Moodle grading worksheet's, in any of the languages above."""
    return {"identifier", "grade"} <= set(columns(header))


def date(text: str) -> datetime | None:
    """A worksheet date (naive: the downloading teacher's zone), in any of the languages above; None for "-"."""
    import dateutil.parser

    words = re.findall(r"[^\W\d_]+|\d+|[:]", re.sub(r"(\d)h(\d)", r"\1:\2", text.strip().lower()))
    if not words or text.strip() == "-":
        return None
    kept = [_MONTHS.get(w, w) for w in words if w not in _WEEKDAYS and w not in ("de", "à", "um", "uhr")]
    try:
        return dateutil.parser.parse(" ".join(kept).replace(" : ", ":"))
    except (ValueError, OverflowError):
        return None


def moodle_date(text: str) -> datetime | None:
    """A date of Moodle's grading worksheet (``Sunday, 1 March 2026, 10:10 PM``, or as German, French or Spanish
    Moodle writes it; naive), None for ``-`` or other text (:func:`autograde.intake.moodle.date`)."""
    return date(text)


def moodle_worksheet_times(path: Path) -> dict[str, datetime | None]:
    """Participant id -> the worksheet's ``Last modified (submission)`` (naive), for a Moodle grading worksheet;
    {} for any other file (a Canvas gradebook has no such column)."""
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
        rows = list(csv.reader(f))
    if not rows:
        return {}
    found_columns = columns(rows[0])
    if "identifier" not in found_columns or MOODLE_COLUMN.lower() not in found_columns:
        return {}
    who, when = found_columns["identifier"], found_columns[MOODLE_COLUMN.lower()]
    found = {}
    for row in rows[1:]:
        number = re.search(r"(\d+)\s*$", row[who]) if len(row) > who else None
        if number:
            found[number[1]] = moodle_date(row[when]) if len(row) > when else None
    return found


# The name the student gave a file comes last and may hold anything, the system's own separators included: each
# pattern reads the system's fields from the left, up to their first complete run (non-greedy), never from the
# student's part (red team, issue 19: a file named "x_222_assignsubmission_file_..." was read as participant 222's).
_MOODLE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_[a-z]+_(?P<file>.*)$")
# A student's folder ends with the system's fields, so there they are read from the right: the full name before them
# (which a student may be able to edit in their profile) cannot take another participant's id.
_MOODLE_FOLDER = re.compile(r"^(?P<name>.+)_(?P<id>\d+)_assignsubmission_[a-z]+_$")


def _moodle(root: Path, pattern: str) -> Reader:
    def read(rel: PurePosixPath) -> list[Entry]:
        if len(rel.parts) > 1:
            found = _MOODLE_FOLDER.match(rel.parts[0])
            return [Entry(safe_id(found["name"]), found["id"], rel.name, name=found["name"])] if found else []
        found = _MOODLE.match(rel.name)
        if not found or not found["file"]:  # (a flat file has a name after the fields; a folder ends with '_')
            return []
        return [Entry(safe_id(found["name"]), found["id"], found["file"], name=found["name"])]
    return read


def _student_folder(name: str) -> bool:
    return bool(_MOODLE_FOLDER.match(name))


def _fill_moodle(rows, header, grades, missing, column) -> Filled:
    if len(grades) > 1:
        raise ValueError("a Moodle grading worksheet holds one assignment, but several were graded: "
                         "grade one with --assignment")
    found = columns(header)  # (in the teacher's language: English, German, French or Spanish)
    at = header.index(column) if column in header else found["grade"]
    most = found.get("maximum grade")
    who, name, email = found["identifier"], found.get("full name"), found.get("email address")
    (assignment, by_student), = grades.items()
    filled = Filled(Path(), "Moodle grading worksheet", {assignment: header[at]}, {assignment: None})
    index, matched = gradesheet.index(by_student), set()
    shared = gradesheet.shared(by_student)
    for row in rows[1:]:
        if len(row) <= max(at, who):
            continue
        number = re.search(r"(\d+)\s*$", row[who])  # "Participant 123456"
        if number and number[1] in shared:
            continue  # (whose grade it is cannot be told: the cell stays as exported)
        names = ([safe_id(row[name])] if name is not None and len(row) > name else []) + (
            [row[email].split("@")[0]] if email is not None and len(row) > email else [])
        grade = gradesheet.lookup(index, number[1] if number else "", names)
        points = gradesheet.number(row[most]) if most is not None and len(row) > most else None
        if points:
            filled.points[assignment] = points
        gradesheet.put(row, at, grade, points, missing, filled, matched)
    filled.conflicts = [(g.student, g.lms_id, assignment) for g in by_student.values() if g.lms_id in shared]
    filled.absent = [(g.student, g.lms_id, assignment) for g in by_student.values()
                     if g.handed_in and g.student not in matched and g.lms_id not in shared]
    return filled


def moodle_folder(full_name: str, participant_id: str) -> str:
    """The folder of a student's feedback in Moodle's feedback zip: ``<Full Name>_<participant id>_assignfeedback_file_``.

    The name is shown, not read (Moodle matches the participant id), but an ``_`` in it would shift the fields, so
    each becomes a space, as Moodle's own download does; a path separator or control character becomes a space too.
    Raises ValueError for a participant id that is not a number (Moodle would skip the folder).
    """
    if not participant_id.isdigit():
        raise ValueError(f"a Moodle participant id is a number, not {participant_id!r}")
    name = re.sub(r"[_/\\\x00-\x1f\x7f]+", " ", full_name).strip() or "Participant"
    return f"{name}_{participant_id}_assignfeedback_file_"


def _feedback_members(pdfs: dict[str, Path], lms_ids: dict[str, str], names: dict[str, str]
                      ) -> tuple[dict[str, Path], list[str]]:
    members, left_out = {}, []
    for student, path in pdfs.items():
        participant = lms_ids.get(student, "")
        if not participant.isdigit():
            left_out.append(student)
            continue
        members[f"{moodle_folder(names.get(student, student), participant)}/{MOODLE_FILE}"] = path
    return members, left_out


GRADEBOOK = Gradebook("moodle", "a Moodle grading worksheet (columns Identifier, Full name, ..., Grade, in English, "
                      "German, French or Spanish)", is_worksheet, _fill_moodle)
FEEDBACK = FeedbackUpload(MOODLE_ZIP, _feedback_members,
                          "not in %s (no Moodle participant id, e.g. a roster student with nothing handed in): %s; "
                          "their PDFs are in %s")
# (No times hook: a Moodle export's names carry no time; its worksheet does, read where the worksheet is given.)
LAYOUT = Layout("moodle", "Moodle", _moodle, student_folder=_student_folder, gradebook=GRADEBOOK, feedback=FEEDBACK)
