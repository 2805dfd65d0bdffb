"""Fill a gradebook exported from an LMS with the grades, as a copy ready to import back.

The formats are the LMS adapters' (:attr:`autograde.intake.adapter.Layout.gradebook`), tried in the order of
:data:`autograde.intake.lms.GRADEBOOKS` on the file's header: a Canvas gradebook export (:mod:`autograde.intake.canvas`)
and a Moodle grading worksheet (:mod:`autograde.intake.moodle`). Each adapter finds its students' rows and the column
to fill; what is common to them is :mod:`autograde.intake.gradesheet`.

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
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from traitlets import Enum
from traitlets.config import Configurable

from .intake import lms
from .intake.adapter import Filled, Grade
from .intake.gradesheet import number as _number
from .intake.lms import read_cell, spreadsheet_cell

__all__ = ["ABSENT_FILE", "IMPORT_FILE", "Filled", "Grade", "GradebookExport", "fill", "kind_of", "read_grades"]

log = logging.getLogger(__name__)

IMPORT_FILE = "gradebook-import.csv"
ABSENT_FILE = "not_in_gradebook.csv"


class GradebookExport(Configurable):
    """How grades go into an LMS gradebook (``c.GradebookExport.<name>`` in nbgrader_config.py)."""

    missing = Enum(["zero", "blank"], "blank", help="what a student in the gradebook who handed nothing in gets: "
                   "'zero', or 'blank' (the cell is left as exported)").tag(config=True)


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
    """The kind of the gradebook (:attr:`autograde.intake.adapter.Gradebook.kind`: 'canvas', 'moodle'), from its
    header; ValueError for anything else."""
    rows, _ = _read(path)
    header = [h.strip() for h in rows[0]] if rows else []
    for book in lms.GRADEBOOKS.values():
        if book.recognises(header):
            return book.kind
    raise ValueError(f"{path} is neither {' nor '.join(book.description for book in lms.GRADEBOOKS.values())}; "
                     f"its header is: {', '.join(header[:8])}")


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
    filled = lms.GRADEBOOKS[kind].fill(rows, header, grades, missing, column)
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
