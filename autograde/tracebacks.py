"""Where in a student's own code an error was raised, read from a notebook's error output.

A traceback in an executed notebook runs through the test cell, the student's
cells and library code. Feedback shows only the student's part: the last frame
that lies in a cell the student wrote, with its line. The grader's own frames
(test cells, hidden helpers, libraries) are never shown.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import nbformat

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# IPython names a cell's code "Cell In[<execution count>], line <n>", then the lines around it, "---->" marking the line.
_CELL_FRAME = re.compile(r"^Cell In\[(?P<count>\d+)\], line (?P<line>\d+)(?:, in (?P<function>[^\n(]+))?")
_MARKED = re.compile(r"^-+> ?\s*(?P<number>\d+)\s?(?P<text>.*)$")


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
        marked = next((m for m in map(_MARKED.match, text.splitlines()[1:]) if m and int(m["number"]) == line), None)
        source_lines = cell.source.splitlines()
        code = marked["text"].strip() if marked else (source_lines[line - 1].strip() if 0 < line <= len(source_lines) else "")
        function = match["function"].strip() if match["function"] else None
        found = Frame(_name(cell, index), line, code, function)
    return found
