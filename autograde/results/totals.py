"""Each submission's totals, computed once from its test cells' rows for every writer (grades.csv, the late
penalty, the report): one notebook of one student, its raw score, its maximum and whether it was handed in."""
from __future__ import annotations

from dataclasses import dataclass

from .classify import CellResult, Status


@dataclass
class Submission:
    """One student's notebook of one assignment, summed over its test cells."""

    student: str
    assignment: str
    raw: float = 0.0  # points before any late penalty
    max_score: float = 0.0
    handed_in: bool = False  # some row is not missing (a single row can be missing from a notebook handed in)


def submissions(rows: list[CellResult]) -> dict[tuple[str, str], Submission]:
    """(student, assignment) -> its :class:`Submission`, in the order the rows first name them."""
    found: dict[tuple[str, str], Submission] = {}
    for r in rows:
        total = found.setdefault((r.student_id, r.assignment), Submission(r.student_id, r.assignment))
        total.raw += r.score
        total.max_score += r.max_score
        total.handed_in |= r.status is not Status.MISSING
    return found
