"""Each student's feedback page: for every test cell its points, its status and the failure message.

The messages are what the tests say to students; the page never shows test
code, so hidden tests stay hidden. The template (``templates/feedback.html.j2``)
gets the data, structured, and decides the presentation.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from .classify import CellResult
from .pages import render


def feedback_context(student: str, rows: list[CellResult], notes: dict | None = None, lms_id: str = "") -> dict:
    """What the feedback template gets for `student`, from their rows of scores.csv.

    ``{"student", "lms_id", "assignments": [{"assignment", "score", "max_score", "notes",
    "cells": [{"grade_id", "points", "max", "status", "meaning", "message"}]}]}``, assignments in
    the order of `rows`. `notes` maps (student_id, assignment) to sentences on what the grader
    repaired or flagged in that notebook.
    """
    notes = notes or {}
    by_assignment: dict[str, list[CellResult]] = defaultdict(list)
    for r in rows:
        by_assignment[r.assignment].append(r)
    assignments = [{
        "assignment": assignment,
        "score": sum(c.score for c in cells),
        "max_score": sum(c.max_score for c in cells),
        "notes": list(notes.get((student, assignment), [])),
        "cells": [{"grade_id": c.grade_id, "points": c.score, "max": c.max_score, "status": str(c.status),
                   "meaning": c.status.meaning, "message": c.message} for c in cells],
    } for assignment, cells in by_assignment.items()]
    return {"student": student, "lms_id": lms_id, "assignments": assignments}


def write_feedback(rows: list[CellResult], folder: Path, notes: dict | None = None,
                   lms_ids: dict | None = None) -> list[Path]:
    """Write ``folder/<student_id>.html`` for every student; returns the paths.

    `notes` maps (student_id, assignment) to sentences on what the grader
    repaired or flagged in that notebook; they are shown above its table.
    `lms_ids` maps student ids to the LMS's user ids, shown beside them.
    """
    lms_ids = lms_ids or {}
    folder.mkdir(parents=True, exist_ok=True)
    by_student: dict[str, list[CellResult]] = defaultdict(list)
    for r in rows:
        by_student[r.student_id].append(r)
    written = []
    for student, own in sorted(by_student.items()):
        path = folder / f"{student}.html"
        path.write_text(render("feedback.html.j2", **feedback_context(student, own, notes, lms_ids.get(student, ""))))
        written.append(path)
    return written
