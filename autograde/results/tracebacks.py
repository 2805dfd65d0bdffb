"""What of an error a student may see: the student's own line it came from, and whose message it is.

A traceback in an executed notebook runs through the test cell, the student's
cells and library code. Feedback shows only the student's part: the last frame
that lies in a cell the student wrote, with its line (read from the student's
own cell, not from the traceback's text). The grader's own frames (test cells,
hidden helpers, libraries) are never shown.

An exception that student code raised carries a message the student chose.
:func:`graders_own_verdict` tells a test's own verdict (shown at length) from
any other message (shown as one short line).
"""
from __future__ import annotations

import os
import re
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import nbformat

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# IPython names a cell's code "Cell In[<execution count>], line <n>", then the lines around it, "---->" marking the line.
_CELL_FRAME = re.compile(r"^Cell In\[(?P<count>\d+)\], line (?P<line>\d+)(?:, in (?P<function>[^\n(]+))?")
_MARKED = re.compile(r"^-+> ?\s*(?P<number>\d+)\s?(?P<text>.*)$")
# Any other frame: "File /path/to/module.py:123, in function(...)".
_FILE_FRAME = re.compile(r"^\s*File (?P<path>.+?):\d+(?:, in |$)")


@dataclass(frozen=True)
class Frame:
    """A frame of the student's code: the cell (its grade id, or its position), the line and its text."""

    cell: str
    line: int
    text: str
    function: str | None = None

    def __str__(self) -> str:
        where = f"{self.cell}, line {self.line}" + (f", in {self.function}" if self.function else "")
        return f"{where}: {self.text}" if self.text else where


def _students(cell: nbformat.NotebookNode) -> bool:
    """A cell the student wrote: a solution cell, or one they added (no nbgrader metadata)."""
    meta = cell.metadata.get("nbgrader")
    return cell.cell_type == "code" and (not meta or bool(meta.get("solution")))


def _name(cell: nbformat.NotebookNode, index: int) -> str:
    grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
    return f"cell {grade_id!r}" if grade_id else f"the cell you added at position {index + 1}"


def student_frame(notebook: nbformat.NotebookNode, traceback: list[str]) -> Frame | None:
    """The last frame of `traceback` (an error output's list of strings) in a cell the student wrote.

    Cells are found by execution count, as IPython names them ("Cell In[7]").
    None when no frame lies in the student's code (the error is in a test's own
    check, or the traceback is not IPython's).
    """
    by_count = {cell.get("execution_count"): (index, cell) for index, cell in enumerate(notebook.cells)
                if cell.cell_type == "code" and cell.get("execution_count") is not None}
    found = None
    for entry in traceback:
        text = _ANSI.sub("", entry)
        match = _CELL_FRAME.match(text)
        if not match or int(match["count"]) not in by_count:
            continue
        index, cell = by_count[int(match["count"])]
        if not _students(cell):
            continue
        line = int(match["line"])
        # The line's text from the student's own cell: the traceback's text is what the kernel printed, which student
        # code can rewrite (linecache), and the function's name too.
        source_lines = cell.source.splitlines()
        code = source_lines[line - 1].strip() if 0 < line <= len(source_lines) else ""
        function = match["function"].strip() if match["function"] else None
        if function is not None and not re.fullmatch(r"[\w.<>]{1,80}", function):
            function = None
        found = Frame(_name(cell, index), line, code, function)
    return found


def _library(path: str) -> bool:
    """Whether `path` is a file of Python's standard library or of an installed package."""
    folders = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    try:
        resolved = Path(os.path.expanduser(path)).resolve()  # (IPython writes the home folder as ~)
    except (OSError, ValueError):
        return False
    return any(resolved.is_relative_to(Path(folder).resolve()) for folder in folders)


def _frames(notebook: nbformat.NotebookNode, traceback: list[str]) -> list[str]:
    """The kind of each frame of `traceback`, outermost first: "grader" (a cell the grader provides: a test or a
    given cell), "student" (a cell the student wrote or added, a cell not in the notebook, code made with ``exec``
    or any file outside the libraries) or "library" (a file of Python's or an installed package)."""
    by_count = {cell.get("execution_count"): cell for cell in notebook.cells
                if cell.cell_type == "code" and cell.get("execution_count") is not None}
    kinds = []
    for entry in traceback:
        text = _ANSI.sub("", entry).lstrip()
        match = _CELL_FRAME.match(text)
        if match:
            cell = by_count.get(int(match["count"]))
            kinds.append("grader" if cell is not None and not _students(cell) else "student")
            continue
        match = _FILE_FRAME.match(text)
        if match:
            kinds.append("library" if _library(match["path"]) else "student")
    return kinds


def raised_by_student(notebook: nbformat.NotebookNode, traceback: list[str]) -> bool:
    """Whether the message of the exception of `traceback` (an error output's list of strings) is the student's.

    It is whenever the student's code lies anywhere on the way from the test
    to the raise: a cell the student wrote or added, or code they made
    elsewhere (``exec``, a file outside the libraries). Student code that calls
    a helper of the grader's cells (``expect_close(0, 1, text)``) chose that
    helper's message, so it is theirs too; and so is a "library" frame that
    calls back into the grader's cells (student code compiled under a
    library's file name). An exception raised in the test's own check, or in
    a library the test called, gives the test's verdict; a traceback with no
    frame at all is the grader's own (a dead kernel, a timeout).
    """
    kinds = _frames(notebook, traceback)
    if "student" in kinds:
        return True
    return "library" in kinds and "grader" in kinds[kinds.index("library"):]


def graders_own_verdict(notebook: nbformat.NotebookNode, traceback: list[str]) -> bool:
    """Whether the exception of `traceback` was raised by the grader's cells with nothing else on the way.

    Only then is its message shown at length: a library's frame may be
    student code compiled under a library's file name, whose message is the
    student's to choose. A traceback with no frame at all is the grader's own
    (a dead kernel, a timeout).
    """
    return set(_frames(notebook, traceback)) <= {"grader"}
