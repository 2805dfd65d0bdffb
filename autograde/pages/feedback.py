"""Each student's feedback page: what to revisit first, then every exercise with what each test checks.

The page is what a teacher would hand back: a summary (points, the exercises
that lost the most points, linked), the grader's notes on the notebook, then
each exercise under its own title from the notebook, with its points and, for
every test cell, what it checks in words (the cell's description line, see
:mod:`autograde.pages.outline`) and, where points were lost, the test's message in
full and the line of the student's own code an error came from. It never shows
test code, so hidden tests stay hidden. The template
(``templates/feedback.html.j2``) gets this structured and decides the layout.

What a student reads is made readable here: the TeX of the notebook's
headings and descriptions (``$n^2$``) becomes MathML, which browsers render
with no script and no network (:func:`maths`), and long floats in messages and
notes (``0.019999999552965164``) are rounded (:func:`round_floats`). The CSVs
keep the exact text.
"""
from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from markupsafe import Markup, escape

from ..course import source_notebook
from ..results.classify import CellResult, Status
from ..results.late import Lateness
from .outline import Exercise, outline
from .render import render

# Inline maths as the notebooks write it: $...$ (not $$, not an escaped \$; as in pandoc, no space inside the
# dollars and no digit right after the closing one, so "$5 and $6" is money).
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?![$\s])(?P<tex>[^$\n]+?)(?<![\\\s])\$(?![$\d])")
# A decimal number (not part of a word, a version or a longer number), with its exponent if any.
_DECIMAL = re.compile(r"(?<![\w.])(?P<number>\d+\.\d+(?:[eE][+-]?\d+)?)(?!\w)(?!\.\d)")
SIGNIFICANT_DIGITS = 6  # long floats are shown at this precision (the tests' own messages print at .6g)


def maths(text: str) -> Markup:
    """`text` escaped for HTML, each inline ``$...$`` formula in it typeset as MathML (left as written if it fails)."""
    from latex2mathml.converter import convert

    parts, end = [], 0
    for match in _INLINE_MATH.finditer(text):
        parts.append(escape(text[end:match.start()]))
        try:
            parts.append(Markup(convert(match["tex"].strip())))
        except Exception:  # TeX the converter does not know: shown as written, never a broken page
            parts.append(escape(match.group(0)))
        end = match.end()
    parts.append(escape(text[end:]))
    return Markup("").join(parts)


def round_floats(text: str) -> str:
    """`text` with every decimal number of more than :data:`SIGNIFICANT_DIGITS` + 1 significant digits shown with
    :data:`SIGNIFICANT_DIGITS` (``0.019999999552965164`` → ``0.02``); integers, names and shorter numbers unchanged."""
    def shorter(match):
        number = match["number"]
        digits = re.split(r"[eE]", number)[0].replace(".", "").lstrip("0")
        return f"{float(number):.{SIGNIFICANT_DIGITS}g}" if len(digits) > SIGNIFICANT_DIGITS + 1 else number
    return _DECIMAL.sub(shorter, text)

# What a lost point means, addressed to the student (the test's own message follows).
_WHY = {
    Status.FAILED: "A check found a mistake:",
    Status.ERROR: "Your code raised an error here, so the check could not run:",
    Status.TIMEOUT: "This ran longer than the time limit and was stopped.",
    Status.CRASHED: "The Python kernel died while running this (a crash, os._exit or running out of memory).",
    Status.MISSING: "This test was not run: no notebook of yours was graded for this assignment.",
}


@functools.cache  # (read once per run, not once per student)
def _course_outline(assignment: str) -> tuple[str, list[Exercise]]:
    """(title, exercises) of a course assignment, from its notebook; the id alone for one the course lacks."""
    try:
        notebook = source_notebook(assignment)
    except FileNotFoundError:
        return assignment, []
    title = next((m.group(1) for c in notebook.cells if c.cell_type == "markdown"
                  for m in [re.search(r"^#\s+(.+)$", c.source, re.MULTILINE)] if m), assignment)
    return title, outline(notebook)


_UNDEFINED = re.compile(r"^(?:NameError: )?name '(?P<name>\w+)' is not defined$")


def _why(row: CellResult, message: str) -> str:
    """What happened, in words: a name the test needs that is not defined gets its likely cause."""
    undefined = _UNDEFINED.match(message.strip())
    if row.status is Status.ERROR and undefined:
        return (f"The check could not run: {undefined['name']} is not defined. Is the cell that defines it done, "
                "and does it run without an error from top to bottom?")
    return _WHY.get(row.status, row.status.meaning)


def _exercise(number: str, title: str, rows: list[CellResult], tests: dict) -> dict:
    checks = []
    for r in rows:
        test = tests.get(r.grade_id)
        message = r.details or r.message
        if r.status is Status.FAILED and message.startswith("AssertionError: "):  # the words are the test's own
            message = message.removeprefix("AssertionError: ")
        description = test.description if test and test.description else f"Test {r.grade_id}"
        checks.append({
            "grade_id": r.grade_id,
            "description": description, "description_html": maths(description),
            "hidden": bool(test and test.hidden),
            "visibility": test.visibility if test else "visible",
            "score": r.score, "max_score": r.max_score, "passed": r.score >= r.max_score,
            "why": round_floats(_why(r, message)),
            "message": round_floats(message) if r.status not in (Status.MISSING, Status.PASSED) else "",
            "where": r.where,
        })
    score, max_score = sum(r.score for r in rows), sum(r.max_score for r in rows)
    heading = f"{number}. {title}" if number else title
    return {"heading": heading, "heading_html": maths(heading), "anchor": "exercise-" + (number or "other"),
            "score": score, "max_score": max_score, "lost": max_score - score, "tests": checks,
            "grade_class": _grade_class(score, max_score)}


def _grade_class(score: float, max_score: float) -> str:
    return "full" if score >= max_score else ("none" if score <= 0 else "partial")


def assignment_context(student: str, assignment: str, rows: list[CellResult], notes: list[str],
                       course_outline: Callable[[str], tuple[str, list[Exercise]]] | None = None,
                       late: Lateness | None = None) -> dict:
    """What the feedback template shows of one assignment of one student.

    ``{"id", "title", "title_html", "score", "max_score", "missing", "not_graded" (why, when no check could run),
    "notes", "exercises": [{"heading", "heading_html", "anchor", "score", "max_score", "lost", "tests": [{"grade_id",
    "description", "description_html", "hidden", "visibility", "score", "max_score", "passed", "why", "message", "where"}]}],
    "revisit": [the exercises that lost points, most lost first, at most 3]}``. The ``*_html`` values are the
    text with its maths typeset (:func:`maths`); messages, reasons and notes have their long floats rounded.
    Test cells the outline does not know (an assignment outside the course) are grouped under "Other tests".
    With `late` (:class:`autograde.results.late.Lateness`): "penalty" (points deducted), "final" (the score after it)
    and "late" (what was deducted and why, in words; "" when nothing is to be said).
    """
    title, exercises = (course_outline or _course_outline)(assignment)
    by_id = {r.grade_id: r for r in rows}
    tests = {t.grade_id: t for e in exercises for t in e.tests}
    sections = [_exercise(e.number, e.title, [by_id[t.grade_id] for t in e.tests if t.grade_id in by_id], tests)
                for e in exercises]
    sections = [s for s in sections if s["tests"]]
    other = [r for r in rows if r.grade_id not in tests]
    if other:
        sections.append(_exercise("", "Other tests", other, tests))
    score, max_score = sum(r.score for r in rows), sum(r.max_score for r in rows)
    revisit = sorted((s for s in sections if s["lost"] > 0), key=lambda s: -s["lost"])[:3]
    missing = bool(rows) and all(r.status is Status.MISSING for r in rows)
    # One outcome for every cell (a file that is no notebook, a notebook that could not run): said once.
    outcomes = {(r.status, r.message) for r in rows}
    not_graded = (rows[0].message if len(rows) > 1 and len(outcomes) == 1 and not missing
                  and rows[0].status not in (Status.PASSED, Status.FAILED) else "")
    return {"id": assignment, "title": title, "title_html": maths(title), "score": score, "max_score": max_score,
            "grade_class": _grade_class(score, max_score), "missing": missing, "not_graded": round_floats(not_graded),
            "notes": [round_floats(n) for n in notes], "exercises": sections, "revisit": revisit,
            "penalty": late.penalty if late else 0.0, "final": score - (late.penalty if late else 0.0),
            "late": late.explain() if late else ""}


def feedback_context(student: str, rows: list[CellResult], notes: dict | None = None, lms_id: str = "",
                     course_outline: Callable[[str], tuple[str, list[Exercise]]] | None = None,
                     lateness: dict | None = None) -> dict:
    """What the feedback template gets for `student`, from their rows of scores.csv.

    ``{"student", "lms_id", "assignments": [see assignment_context]}``, assignments in the order of `rows`.
    `notes` maps (student_id, assignment) to sentences on what the grader repaired or flagged in that notebook;
    `course_outline` gives an assignment's (title, exercises) (by default read from the course's notebooks);
    `lateness` maps (student_id, assignment) to its :class:`autograde.results.late.Lateness`.
    """
    notes, lateness = notes or {}, lateness or {}
    by_assignment: dict[str, list[CellResult]] = defaultdict(list)
    for r in rows:
        by_assignment[r.assignment].append(r)
    return {"student": student, "lms_id": lms_id,
            "assignments": [assignment_context(student, a, own, notes.get((student, a), []), course_outline,
                                               lateness.get((student, a))) for a, own in by_assignment.items()]}


def write_feedback(rows: list[CellResult], folder: Path, notes: dict | None = None,
                   lms_ids: dict | None = None, lateness: dict | None = None) -> list[Path]:
    """Write ``folder/<student_id>.html`` for every student; returns the paths.

    `notes` maps (student_id, assignment) to sentences on what the grader
    repaired or flagged in that notebook; they are shown under the summary.
    `lms_ids` maps student ids to the LMS's user ids, shown beside them. `lateness` (by (student_id, assignment),
    :func:`autograde.results.late.assess`) gives each late penalty: the page shows the final score and says what
    was deducted and why.
    """
    lms_ids = lms_ids or {}
    folder.mkdir(parents=True, exist_ok=True)
    by_student: dict[str, list[CellResult]] = defaultdict(list)
    for r in rows:
        by_student[r.student_id].append(r)
    written = []
    for student, own in sorted(by_student.items()):
        path = folder / f"{student}.html"
        path.write_text(render("feedback.html.j2", **feedback_context(student, own, notes, lms_ids.get(student, ""),
                                                                      lateness=lateness)))
        written.append(path)
    return written
