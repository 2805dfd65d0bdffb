"""The steps of filling a gradebook's grade cells that every LMS's gradebook shares (:attr:`.adapter.Layout.gradebook`).

An adapter's fill finds its students' rows and the column to fill in its own format, then calls these: who a row's
grade is (by LMS user id, else by a name the gradebook shows, never when two student ids claim one user id), and
what goes in the cell (the grade, scaled to the gradebook's points, or 0 or nothing by the `missing` setting).
"""
from __future__ import annotations

import re
from collections import defaultdict

from .adapter import Filled, Grade, match_assignment

_COLUMN_ID = re.compile(r"\s*\(\d+\)\s*$")


def number(text: str) -> float | None:
    """A gradebook cell as a number (a decimal comma read as a point), or None."""
    try:
        return float(text.strip().replace(",", "."))
    except (ValueError, AttributeError):
        return None


def _format(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def column(header: list[str], assignment: str, assignments: list[str], column: str | None, skip: int) -> int | None:
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


def shared(by_student: dict[str, Grade]) -> set[str]:
    """The LMS user ids that more than one student id has: no grade of theirs may fill a cell (never first-wins)."""
    seen: dict[str, int] = defaultdict(int)
    for grade in by_student.values():
        if grade.lms_id:
            seen[grade.lms_id] += 1
    return {lms_id for lms_id, n in seen.items() if n > 1}


def index(by_student: dict[str, Grade]) -> dict[tuple[str, str], Grade]:
    """Grades by ("id", LMS user id) and by ("name", student id in lower case), leaving out the grades whose LMS
    user id another student id also has (:func:`shared`)."""
    found = {}
    claimed = shared(by_student)
    for grade in by_student.values():
        if grade.lms_id in claimed:
            continue
        if grade.lms_id:
            found.setdefault(("id", grade.lms_id), grade)
        found.setdefault(("name", grade.student.lower()), grade)
    return found


def lookup(index: dict, lms_id: str, names: list[str]) -> Grade | None:
    """A student's grade by LMS user id, else by any of `names` (what the gradebook shows) as student id."""
    keys = [("id", lms_id.strip())] + [("name", n.strip().lower()) for n in names if n.strip()]
    return next((index[k] for k in keys if k in index), None)


def put(row: list[str], at: int, grade: Grade | None, points: float | None, missing: str, filled: Filled,
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
