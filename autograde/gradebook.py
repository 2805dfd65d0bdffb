"""Fill a gradebook exported from an LMS with the grades, as a copy ready to import back.

Two formats, read from their header:

- Canvas, Grades > Export ("Export Entire Gradebook"): columns ``Student``
  (sortable name), ``ID`` (the Canvas user id, the one in the submission file
  names), ``SIS User ID``, ``SIS Login ID``, ``Section``, then one column per
  assignment titled ``{name} ({assignment id})``, with a ``Points Possible``
  row under the header and read-only total columns at the end. Canvas imports
  the cells that changed.
- Moodle, an assignment's "Download grading worksheet": columns ``Identifier``
  (``Participant {id}``, the id in the submission folder names), ``Full name``,
  ``Email address``, ``Status``, ``Grade``, ``Maximum grade``, ... ; Moodle
  imports the ``Grade`` column by ``Identifier``.

The copy keeps every row and column as exported, byte for byte (line endings,
quoting, a BOM, newlines inside quoted cells), and changes only the grade cells
of the assignments the run was for: scores are scaled to the points the
gradebook gives the assignment.
Students in the gradebook with nothing handed in get 0 or keep their cell (a
setting); students graded but not in the gradebook are listed, never dropped.
"""
from __future__ import annotations

import csv
import io
import logging
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from traitlets import Enum
from traitlets.config import Configurable

from .intake import moodle
from .intake.collect import match_assignment
from .intake.lms import read_cell, safe_id, spreadsheet_cell

log = logging.getLogger(__name__)

IMPORT_FILE = "gradebook-import.csv"
ABSENT_FILE = "not_in_gradebook.csv"
_CANVAS_IDS = ["Student", "ID", "SIS User ID", "SIS Login ID"]
_COLUMN_ID = re.compile(r"\s*\(\d+\)\s*$")


class GradebookExport(Configurable):
    """How grades go into an LMS gradebook (``c.GradebookExport.<name>`` in nbgrader_config.py)."""

    missing = Enum(["zero", "blank"], "blank", help="what a student in the gradebook who handed nothing in gets: "
                   "'zero', or 'blank' (the cell is left as exported)").tag(config=True)


@dataclass
class Grade:
    """One student's grade for one assignment, from scores.csv."""

    student: str
    lms_id: str
    score: float
    max_score: float
    handed_in: bool


@dataclass
class Filled:
    """What filling a gradebook did, for the summary."""

    path: Path
    kind: str  # "Canvas gradebook" or "Moodle grading worksheet"
    columns: dict[str, str]  # assignment -> the gradebook column filled
    points: dict[str, float | None]  # assignment -> the points the gradebook gives it (None: as graded)
    filled: int = 0
    missing: int = 0
    changed: dict[str, int] = field(default_factory=dict)  # gradebook column -> cells whose value changed
    absent: list[tuple[str, str, str]] = field(default_factory=list)  # (student, lms user id, assignment)
    # Grades whose LMS user id more than one student id claims: filled nowhere (student, lms user id, assignment).
    conflicts: list[tuple[str, str, str]] = field(default_factory=list)


def read_grades(scores: Path) -> dict[str, dict[str, Grade]]:
    """Grades by assignment and student id: the final score that grades.csv beside `scores` gives (its ``score``,
    after any late penalty, the one place it is computed), else the sum of scores.csv's rows; handed in unless all
    of a notebook's rows in scores.csv are missing."""
    grades: dict[str, dict[str, Grade]] = defaultdict(dict)
    with open(scores, newline="") as f:
        for row in csv.DictReader(f):
            student, lms_id = read_cell(row["student_id"]), read_cell(row.get("lms_user_id", ""))
            grade = grades[row["assignment"]].setdefault(student, Grade(student, lms_id, 0.0, 0.0, False))
            grade.score += float(row["score"])
            grade.max_score += float(row["max_score"])
            grade.handed_in |= row["status"] != "missing"
    totals = scores.parent / "grades.csv"
    if totals.is_file():
        with open(totals, newline="") as f:
            for row in csv.DictReader(f):
                grade = grades.get(row["assignment"], {}).get(read_cell(row["student_id"]))
                final = _number(row.get("score") or "")
                if grade is not None and final is not None:
                    grade.score = final
    return grades


@dataclass
class _Csv:
    """A CSV file as written: each record's cells as raw text (quotes included) and its line ending, so that a
    copy can give back every cell it did not change byte for byte."""

    bom: bytes
    raw: list[list[str]]
    ends: list[str]


def _split(text: str) -> tuple[list[list[str]], list[str]]:
    """The records of CSV `text` as raw cells (RFC 4180, as the csv module reads it), and their line endings."""
    records, ends, cells = [], [], []
    start = i = 0
    n = len(text)
    while True:
        if i < n and text[i] == '"':  # a quoted cell: up to the quote that is not doubled
            i += 1
            while i < n and not (text[i] == '"' and text[i + 1:i + 2] != '"'):
                i += 2 if text[i] == '"' else 1
            i += 1
        while i < n and text[i] not in ',\r\n':  # (what follows a closing quote belongs to the cell too)
            i += 1
        cells.append(text[start:i])
        if i < n and text[i] == ",":
            i += 1
            start = i
            continue
        end = "\r\n" if text.startswith("\r\n", i) else text[i:i + 1]
        records.append(cells)
        ends.append(end)
        i += len(end)
        start, cells = i, []
        if i >= n:
            return records, ends


def _unquoted(raw: str) -> str:
    """The value of one raw cell, as the csv module reads it."""
    if not raw.startswith('"'):
        return raw
    close = 1
    while close < len(raw) and not (raw[close] == '"' and raw[close + 1:close + 2] != '"'):
        close += 2 if raw[close] == '"' else 1
    return raw[1:close].replace('""', '"') + raw[close + 1:]


def _read_bytes(data: bytes) -> tuple[list[list[str]], _Csv]:
    """The rows of a CSV file's bytes as values, and the file as written (bytes that are not UTF-8 are kept)."""
    bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    text = data[len(bom):].decode("utf-8", errors="surrogateescape")
    raw, ends = _split(text) if text else ([], [])
    return [[_unquoted(cell) for cell in record] for record in raw], _Csv(bom, raw, ends)


def _read(path: Path) -> tuple[list[list[str]], _Csv]:
    return _read_bytes(path.read_bytes())


def _quoted(value: str) -> str:
    """One cell as the csv module writes it (quoted only where needed)."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow([value])
    return buffer.getvalue()


def _write(path: Path, rows: list[list[str]], before: list[list[str]], original: _Csv) -> None:
    """Write `rows`: each cell whose value is as in `before` exactly as `original` had it, the others quoted as
    the csv module would."""
    lines = []
    for i, row in enumerate(rows):
        raw = original.raw[i] if i < len(original.raw) else []
        old = before[i] if i < len(before) else []
        cells = [raw[j] if j < len(raw) and j < len(old) and old[j] == value else _quoted(value)
                 for j, value in enumerate(row)]
        lines.append(",".join(cells) + (original.ends[i] if i < len(original.ends) else "\r\n"))
    with open(path, "wb") as f:
        f.write(original.bom + "".join(lines).encode("utf-8", errors="surrogateescape"))


def kind_of(path: Path) -> str:
    """'canvas' or 'moodle', from the gradebook's header; ValueError for anything else."""
    rows, _ = _read(path)
    header = [h.strip() for h in rows[0]] if rows else []
    if all(name in header for name in ("Student", "ID")):
        return "canvas"
    if moodle.is_worksheet(header):
        return "moodle"
    raise ValueError(f"{path} is neither a Canvas gradebook export (columns Student, ID, SIS User ID, ...) nor a "
                     f"Moodle grading worksheet (columns Identifier, Full name, ..., Grade, in English, German, "
                     f"French or Spanish); its header is: "
                     f"{', '.join(header[:8])}")


def _number(text: str) -> float | None:
    try:
        return float(text.strip().replace(",", "."))
    except (ValueError, AttributeError):
        return None


def _format(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def fill(gradebook: Path, scores: Path, out: Path, missing: str = "blank", column: str | None = None,
         assignments: list[str] | None = None) -> Filled:
    """Write ``out/gradebook-import.csv``: `gradebook` with the grades of scores.csv filled in.

    Only the columns of `assignments` (the ones the run was for) are filled;
    when `assignments` is None and scores.csv holds several, ValueError: a stray
    notebook of another assignment must not change that assignment's column.
    `column` names the gradebook column to fill (default: the one whose title
    names the assignment). Every cell not filled comes back byte for byte.
    Students graded but not in the gradebook are written to
    ``out/not_in_gradebook.csv``, with the grades whose LMS user id several
    student ids claim: their row is left as exported (never first-wins).
    Raises ValueError when no column (or several)
    can take an assignment's grades.
    """
    kind = kind_of(gradebook)
    rows, original = _read(gradebook)
    before = [list(row) for row in rows]
    header = [h.strip() for h in rows[0]]
    grades = read_grades(scores)
    if assignments is not None:
        grades = {a: by_student for a, by_student in grades.items() if a in assignments}
    elif len(grades) > 1:
        raise ValueError(f"{scores} holds the grades of {len(grades)} assignments ({', '.join(sorted(grades))}): "
                         "name the one(s) to fill with --assignment (a stray notebook of another assignment in the "
                         "export must not change that assignment's column)")
    if not grades:
        raise ValueError(f"{scores} holds no grades" + (f" of {', '.join(assignments)}" if assignments else ""))
    if kind == "canvas":
        filled = _fill_canvas(rows, header, grades, missing, column)
    else:
        filled = _fill_moodle(rows, header, grades, missing, column)
    for name in filled.columns.values():
        at = header.index(name.strip())
        filled.changed[name] = sum(1 for new, old in zip(rows, before)
                                   if (new[at] if len(new) > at else "") != (old[at] if len(old) > at else ""))
    filled.path = out / IMPORT_FILE
    _write(filled.path, rows, before, original)
    with open(out / ABSENT_FILE, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student_id", "lms_user_id", "assignment", "score", "max_score", "reason"])
        for listed, why in ((filled.absent, "not in the gradebook"), (filled.conflicts, None)):
            for student, lms_id, assignment in listed:
                grade = grades[assignment][student]
                others = sorted(g.student for g in grades[assignment].values() if g.lms_id == lms_id)
                reason = why or (f"LMS user id {lms_id} is claimed by {len(others)} student ids ({', '.join(others)}): "
                                 "no cell was filled for it")
                writer.writerow([spreadsheet_cell(student), spreadsheet_cell(lms_id), assignment, grade.score,
                                 grade.max_score, spreadsheet_cell(reason)])
    for student, lms_id, assignment in filled.conflicts:
        log.warning("NOT IN THE GRADEBOOK: LMS user id %s of %s is claimed by more than one student id for %s; its "
                    "cell is left as exported, see %s", lms_id, student, assignment, ABSENT_FILE)
    return filled


def _column(header: list[str], assignment: str, assignments: list[str], column: str | None, skip: int) -> int | None:
    """The index of the column that takes `assignment`'s grades: `column` if given, else the one its title names."""
    if column is not None:
        if column not in header:
            raise ValueError(f"the gradebook has no column {column!r}; its columns are: {', '.join(header)}")
        return header.index(column)
    hits = [i for i, title in enumerate(header) if i >= skip and "score" not in title.lower()
            and match_assignment(_COLUMN_ID.sub("", title) + ".ipynb", assignments) == assignment]
    if len(hits) > 1:
        raise ValueError(f"several gradebook columns name {assignment}: {', '.join(header[i] for i in hits)}; "
                         "choose one with --gradebook-column")
    return hits[0] if hits else None


def _value(grade: Grade, points: float | None) -> str:
    return _format(grade.score * points / grade.max_score if points and grade.max_score else grade.score)


def _fill_canvas(rows, header, grades, missing, column) -> Filled:
    if column is not None and len(grades) > 1:
        raise ValueError("--gradebook-column names one column, but several assignments were graded: "
                         "grade one with --assignment")
    idx = {name: header.index(name) for name in _CANVAS_IDS if name in header}
    points_row = next((r for r in rows[1:] if r and r[0].strip() == "Points Possible"), None)
    students = [r for r in rows[1:] if len(r) > idx["ID"] and r[idx["ID"]].strip().isdigit()]
    filled = Filled(Path(), "Canvas gradebook", {}, {})
    known = sorted(grades)
    for assignment, by_student in sorted(grades.items()):
        at = _column(header, assignment, known, column, skip=max(idx.values()) + 1)
        if at is None:
            continue
        filled.columns[assignment] = header[at]
        points = _number(points_row[at]) if points_row and len(points_row) > at else None
        filled.points[assignment] = points
        # A student is found by Canvas user id, else by their student id as SIS login or user id.
        index, matched = _index(by_student), set()
        shared = _shared(by_student)
        for row in students:
            if row[idx["ID"]].strip() in shared:
                continue  # (whose grade it is cannot be told: the cell stays as exported)
            grade = _lookup(index, row[idx["ID"]], [row[idx[n]] for n in ("SIS Login ID", "SIS User ID") if n in idx])
            _put(row, at, grade, points, missing, filled, matched)
        filled.conflicts += [(g.student, g.lms_id, assignment) for g in by_student.values() if g.lms_id in shared]
        filled.absent += [(g.student, g.lms_id, assignment) for g in by_student.values()
                          if g.handed_in and g.student not in matched and g.lms_id not in shared]
    if not filled.columns:
        raise ValueError(f"no column of the gradebook names the assignment(s) graded ({', '.join(known)}); choose "
                         "one with --gradebook-column")
    return filled


def _fill_moodle(rows, header, grades, missing, column) -> Filled:
    if len(grades) > 1:
        raise ValueError("a Moodle grading worksheet holds one assignment, but several were graded: "
                         "grade one with --assignment")
    found = moodle.columns(header)  # (in the teacher's language: English, German, French or Spanish)
    at = header.index(column) if column in header else found["grade"]
    most = found.get("maximum grade")
    who, name, email = found["identifier"], found.get("full name"), found.get("email address")
    (assignment, by_student), = grades.items()
    filled = Filled(Path(), "Moodle grading worksheet", {assignment: header[at]}, {assignment: None})
    index, matched = _index(by_student), set()
    shared = _shared(by_student)
    for row in rows[1:]:
        if len(row) <= max(at, who):
            continue
        number = re.search(r"(\d+)\s*$", row[who])  # "Participant 123456"
        if number and number[1] in shared:
            continue  # (whose grade it is cannot be told: the cell stays as exported)
        names = ([safe_id(row[name])] if name is not None and len(row) > name else []) + (
            [row[email].split("@")[0]] if email is not None and len(row) > email else [])
        grade = _lookup(index, number[1] if number else "", names)
        points = _number(row[most]) if most is not None and len(row) > most else None
        if points:
            filled.points[assignment] = points
        _put(row, at, grade, points, missing, filled, matched)
    filled.conflicts = [(g.student, g.lms_id, assignment) for g in by_student.values() if g.lms_id in shared]
    filled.absent = [(g.student, g.lms_id, assignment) for g in by_student.values()
                     if g.handed_in and g.student not in matched and g.lms_id not in shared]
    return filled


def _shared(by_student: dict[str, Grade]) -> set[str]:
    """The LMS user ids that more than one student id has: no grade of theirs may fill a cell (never first-wins)."""
    seen: dict[str, int] = defaultdict(int)
    for grade in by_student.values():
        if grade.lms_id:
            seen[grade.lms_id] += 1
    return {lms_id for lms_id, n in seen.items() if n > 1}


def _index(by_student: dict[str, Grade]) -> dict[tuple[str, str], Grade]:
    """Grades by ("id", LMS user id) and by ("name", student id in lower case), leaving out the grades whose LMS
    user id another student id also has (:func:`_shared`)."""
    index = {}
    shared = _shared(by_student)
    for grade in by_student.values():
        if grade.lms_id in shared:
            continue
        if grade.lms_id:
            index.setdefault(("id", grade.lms_id), grade)
        index.setdefault(("name", grade.student.lower()), grade)
    return index


def _lookup(index: dict, lms_id: str, names: list[str]) -> Grade | None:
    """A student's grade by LMS user id, else by any of `names` (what the gradebook shows) as student id."""
    keys = [("id", lms_id.strip())] + [("name", n.strip().lower()) for n in names if n.strip()]
    return next((index[k] for k in keys if k in index), None)


def _find(names: list[str], name: str) -> int | None:
    return names.index(name) if name in names else None


def _put(row: list[str], at: int, grade: Grade | None, points: float | None, missing: str, filled: Filled,
         matched: set) -> None:
    """Write one student's cell: the grade if handed in, else 0 or nothing, by the `missing` setting."""
    while len(row) <= at:
        row.append("")
    if grade is not None:
        matched.add(grade.student)
    if grade is not None and grade.handed_in:
        row[at] = _value(grade, points)
        filled.filled += 1
    else:
        filled.missing += 1
        if missing == "zero":
            row[at] = "0"
