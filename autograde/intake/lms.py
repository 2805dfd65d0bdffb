"""The registry of export layouts: which learning-management systems (and other layouts) the grader reads.

Each layout is one adapter module (:mod:`.adapter` says what it provides): how its export is recognised and its
student ids read, when a submission was handed in, the gradebook it exports and imports back, and its bulk feedback
upload. :data:`LAYOUTS` lists them in the order they are tried; :data:`GRADEBOOKS`, the gradebooks in the order
their headers are tried. A new system is one new module and its line here. The layouts:

- Canvas, "Download Submissions" (:mod:`.canvas`);
- Moodle, "Download all submissions" (:mod:`.moodle`);
- Blackboard, Grade Center "Assignment File Download" (:mod:`.blackboard`);
- Google Classroom / Drive, the copy Classroom makes for each student (:mod:`.classroom`);
- Gradescope, "Export Submissions" (:mod:`.gradescope_export`);
- nbgrader's own submitted layout, ``{student}/{assignment}/{assignment}.ipynb`` (:mod:`.nbgrader_layout`);
- Folders: one folder per student, or ``{student}_{anything}`` files (``--student-pattern``) (:mod:`.folders`).
"""
from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from . import blackboard, canvas, classroom, folders, gradescope_export, moodle, nbgrader_layout
from .adapter import Entry, Gradebook, Layout, Reader, clean_stem, safe_id

__all__ = ["DEFAULT_STUDENT_PATTERN", "FALLBACK", "FORMULA_START", "GRADEBOOKS", "LAYOUTS", "Entry", "Layout", "Reader",
           "class_files", "clean_stem", "flat_students", "read_cell", "recognise", "safe_id", "spreadsheet_cell", "student_folder",
           "unsafe_student_id"]

# The student id of a flat file, when nothing else says: the text before the first underscore.
DEFAULT_STUDENT_PATTERN = r"^(?P<student>[^_/]+)_"


def unsafe_student_id(student: str) -> str | None:
    """Why `student` cannot be a student id, or None.

    A student id names a folder (``submitted/<student>/``, ``results/<student>/``)
    and a file (``feedback/<student>.html``), whatever layout it was read from:
    it must be one plain path component (not '.', '..', nothing hidden, no
    separator, no control character) of a length every file system takes.
    """
    if not student.strip():
        return "an empty student id"
    if student in (".", "..") or student.startswith("."):
        return f"the student id {student!r} is not a folder name of its own (it starts with '.')"
    if re.search(r"[/\\\x00-\x1f\x7f]", student):
        return f"the student id {student!r} holds a path separator or a control character"
    if len(student.encode()) > 200:
        return f"the student id {student[:40]!r}... is longer than 200 bytes"
    return None


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as the start of a formula


def spreadsheet_cell(value):
    """`value` as a CSV cell no spreadsheet runs as a formula: text that starts like one gets a leading "'"
    (OWASP, CSV injection). Numbers stay numbers."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def read_cell(text: str) -> str:
    """A cell that :func:`spreadsheet_cell` wrote, as it was before."""
    return text[1:] if text.startswith("'") and text[1:].startswith(FORMULA_START) else text


# In the order they are tried: the most specific naming first.
LAYOUTS: dict[str, Layout] = {layout.name: layout for layout in [
    gradescope_export.LAYOUT,
    nbgrader_layout.LAYOUT,
    moodle.LAYOUT,
    blackboard.LAYOUT,
    canvas.LAYOUT,
    classroom.LAYOUT,
    folders.LAYOUT,
]}
# The gradebooks a grade can be filled into, in the order their headers are tried (a Canvas gradebook's "ID" column
# is also one of the names of a Moodle worksheet's Identifier, so Canvas's is tried first).
GRADEBOOKS: dict[str, Gradebook] = {book.kind: book for book in [canvas.GRADEBOOK, moodle.GRADEBOOK]}
FALLBACK = folders.LAYOUT.name  # the layout of last resort: it claims any file in a folder or with a name prefix


def recognise(root: Path, files: list[PurePosixPath], forced: str | None = None,
              pattern: str | None = None) -> tuple[Layout, dict[PurePosixPath, list[Entry]]]:
    """The layout of the export in `root` whose files `files` are, and each file's entries under it.

    `forced` names a layout (``--lms``); `pattern`, a regular expression with
    a group ``student`` (``--student-pattern``), chooses the folders layout
    with it. Otherwise the first specific layout that claims at least half of
    the notebooks wins, else the folders layout if it claims any. Raises
    ValueError, with the first names and what to pass, if no layout claims a
    notebook.
    """
    notebooks = [f for f in files if f.suffix.lower() == ".ipynb"]
    if forced is not None or pattern is not None:
        layout = LAYOUTS[forced or FALLBACK]
        return layout, _read_all(layout, root, files, pattern or DEFAULT_STUDENT_PATTERN)
    for layout in LAYOUTS.values():
        entries = _read_all(layout, root, files, DEFAULT_STUDENT_PATTERN)
        claimed = sum(1 for f in notebooks if entries[f])
        if claimed and (layout.name == FALLBACK or 2 * claimed >= len(notebooks)):
            return layout, entries
    if not notebooks:
        layout = LAYOUTS[FALLBACK]
        return layout, _read_all(layout, root, files, DEFAULT_STUDENT_PATTERN)
    shown = ", ".join(str(f) for f in notebooks[:5]) + (", ..." if len(notebooks) > 5 else "")
    raise ValueError(
        f"cannot tell whose notebooks these are: none of the {len(notebooks)} notebook(s) follows a known export "
        f"layout ({', '.join(layout.title for layout in LAYOUTS.values())}). The first are: {shown}. "
        f"Pass --lms NAME ({', '.join(LAYOUTS)}) if the export comes from one of these, or --student-pattern REGEX "
        "with a group named 'student' that finds the student id in a file name, e.g. "
        "--student-pattern '^(?P<student>[^-]+)-' for files named <student>-<anything>.ipynb.")


def _read_all(layout: Layout, root: Path, files: list[PurePosixPath], pattern: str) -> dict[PurePosixPath, list[Entry]]:
    read = layout.reader(root, pattern)
    return {f: read(f) for f in files}


def student_folder(name: str) -> bool:
    """Whether a folder with this name is, by an LMS's naming, one student's (Moodle) or one submission's (Gradescope)."""
    return any(layout.student_folder(name) for layout in LAYOUTS.values() if layout.student_folder is not None)


def class_files() -> list[str]:
    """The files that mark the folder holding them as the whole class's, by any layout (Gradescope's metadata)."""
    return [layout.class_file for layout in LAYOUTS.values() if layout.class_file]


def flat_students(names: list[str], pattern: str | None = None) -> set[str]:
    """The students that flat files with these names belong to, by any layout's naming (for finding wrappers)."""
    found = set()
    for layout in LAYOUTS.values():
        if layout.flat:  # (the others' students are folders)
            read = layout.reader(Path("."), pattern or DEFAULT_STUDENT_PATTERN)
            found |= {e.student for name in names for e in read(PurePosixPath(name))}
    return found
