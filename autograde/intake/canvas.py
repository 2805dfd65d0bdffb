"""Canvas: its submissions export, its (missing) submission times and its gradebook.

- "Download Submissions": ``{name}_{LATE_}{user id}_{attachment id}_{file}``, where the name is the
  student's sortable name lower-cased with all but letters and digits removed, and a file uploaded again
  under the same name is renamed ``{file}-1``, ``{file}-2`` (canvas-lms ``ContentZipper``,
  ``Attachment.make_unique_filename``). Attachment ids grow with each upload.
- Times: none in the export, only ``LATE`` in the file name; Canvas's own gradebook applies its late policy.
- Grades > Export ("Export Entire Gradebook"): columns ``Student`` (sortable name), ``ID`` (the Canvas user id,
  the one in the submission file names), ``SIS User ID``, ``SIS Login ID``, ``Section``, then one column per
  assignment titled ``{name} ({assignment id})``, with a ``Points Possible`` row under the header and read-only
  total columns at the end. Canvas imports the cells that changed.
"""
from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from . import gradesheet
from .adapter import Entry, Filled, Gradebook, Layout, Reader, SubmissionTime

CANVAS = "Canvas (no time in the export; Canvas's gradebook applies its own late policy)"
_CANVAS_IDS = ["Student", "ID", "SIS User ID", "SIS Login ID"]

# Canvas's name holds no '_' and (lower-cased letters and digits) is never all digits nor "LATE": so the user and
# attachment ids are always the first two numbers, even where no name comes first (an anonymous export).
_CANVAS = re.compile(r"^(?:(?!LATE_)(?P<name>[^_]*[^_\d][^_]*)_)?(?:(?P<late>LATE)_)?(?P<user>\d+|anon_[^_]+)_(?P<attachment>\d+)_(?P<file>.+)$")
_REUPLOAD = re.compile(r"-(\d+)$")


def _canvas(root: Path, pattern: str) -> Reader:
    def read(rel: PurePosixPath) -> list[Entry]:
        found = _CANVAS.match(rel.name) if len(rel.parts) == 1 else None
        if not found:
            return []
        user = found["user"]
        again = _REUPLOAD.search(PurePosixPath(found["file"]).stem)
        return [Entry(found["name"] or user, user if user.isdigit() else "", found["file"],
                      attempt=(int(found["attachment"]), int(again[1]) if again else 0), late=bool(found["late"]))]
    return read


def _times(root: Path, rel: PurePosixPath, entry: Entry, zipped: bool, zone) -> SubmissionTime:
    # (No time at all: Canvas applies its own late policy, and says only whether it found the submission late.)
    return SubmissionTime(None, CANVAS, lms_policy=True, marked_late=entry.late)


def _is_gradebook(header: list[str]) -> bool:
    return all(name in header for name in ("Student", "ID"))


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
        at = gradesheet.column(header, assignment, known, column, skip=max(idx.values()) + 1)
        if at is None:
            continue
        filled.columns[assignment] = header[at]
        points = gradesheet.number(points_row[at]) if points_row and len(points_row) > at else None
        filled.points[assignment] = points
        # A student is found by Canvas user id, else by their student id as SIS login or user id.
        index, matched = gradesheet.index(by_student), set()
        shared = gradesheet.shared(by_student)
        for row in students:
            if row[idx["ID"]].strip() in shared:
                continue  # (whose grade it is cannot be told: the cell stays as exported)
            grade = gradesheet.lookup(index, row[idx["ID"]],
                                      [row[idx[n]] for n in ("SIS Login ID", "SIS User ID") if n in idx])
            gradesheet.put(row, at, grade, points, missing, filled, matched)
        filled.conflicts += [(g.student, g.lms_id, assignment) for g in by_student.values() if g.lms_id in shared]
        filled.absent += [(g.student, g.lms_id, assignment) for g in by_student.values()
                          if g.handed_in and g.student not in matched and g.lms_id not in shared]
    if not filled.columns:
        raise ValueError(f"no column of the gradebook names the assignment(s) graded ({', '.join(known)}); choose "
                         "one with --gradebook-column")
    return filled


GRADEBOOK = Gradebook("canvas", "a Canvas gradebook export (columns Student, ID, SIS User ID, ...)", _is_gradebook,
                      _fill_canvas)
LAYOUT = Layout("canvas", "Canvas", _canvas, times=_times, gradebook=GRADEBOOK)
