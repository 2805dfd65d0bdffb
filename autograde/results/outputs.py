"""Write the grading's tables: scores.csv (one row per test cell), grades.csv (one per submission) and notes.csv.

No text cell starts a spreadsheet formula (a student id or a message from student code could): such text gets a
leading "'" (:func:`autograde.intake.lms.spreadsheet_cell`).
"""
from __future__ import annotations

import csv
from dataclasses import asdict
from pathlib import Path

from ..intake.lms import spreadsheet_cell
from .classify import CellResult
from .late import LATE_COLUMNS, Lateness
from .totals import submissions

SCORE_COLUMNS = ["student_id", "lms_user_id", "assignment", "grade_id", "score", "max_score", "status", "message"]
# score is the final score (after any late penalty, :mod:`autograde.results.late`); raw_score the one before it.
GRADE_COLUMNS = ["student_id", "lms_user_id", "assignment", "score", "max_score", *LATE_COLUMNS]
NOTE_COLUMNS = ["student_id", "lms_user_id", "assignment", "note"]


def write_csvs(rows: list[CellResult], out: Path, lms_ids: dict[str, str] | None = None,
               lateness: dict[tuple[str, str], Lateness] | None = None) -> None:
    """Write scores.csv (one row per test cell) and grades.csv (one row per submission) into `out`.

    `lms_ids` maps student ids to the LMS's own user ids (column lms_user_id, empty where unknown). `lateness`
    (:func:`autograde.results.late.assess`) gives each submission's late penalty: grades.csv's score is the final
    score, with the raw score, the penalty, the submission time, the hours late and where the time came from beside
    it; scores.csv keeps the test cells' own points.
    """
    lateness = lateness or {}
    lms_ids = lms_ids or {}
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "scores.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=SCORE_COLUMNS)
        writer.writeheader()
        writer.writerows({k: spreadsheet_cell(v) for k, v in {
            **{k: v for k, v in asdict(r).items() if k in SCORE_COLUMNS}, "status": str(r.status),
            "lms_user_id": lms_ids.get(r.student_id, "")}.items()} for r in rows)
    with open(out / "grades.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(GRADE_COLUMNS)
        for (student, assignment), total in submissions(rows).items():
            score, max_score = total.raw, total.max_score
            late = lateness.get((student, assignment)) or Lateness(student, assignment, score, max_score)
            writer.writerow([spreadsheet_cell(student), spreadsheet_cell(lms_ids.get(student, "")), assignment,
                             round(score - late.penalty, 6), max_score,
                             *(spreadsheet_cell(v) for v in late.columns().values())])


def write_notes(notes: dict[tuple[str, str], list[str]], path: Path, lms_ids: dict[str, str] | None = None) -> None:
    """Write notes.csv: one row per note (student_id, lms_user_id, assignment, note)."""
    lms_ids = lms_ids or {}
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(NOTE_COLUMNS)
        for (student, assignment), lines in notes.items():
            writer.writerows([spreadsheet_cell(student), spreadsheet_cell(lms_ids.get(student, "")), assignment,
                              spreadsheet_cell(line)] for line in lines)
