"""What of an error a student may see: the student's own line it came from, whose message it is, and no hidden test.

A traceback in an executed notebook runs through the test cell, the student's
cells and library code. Feedback shows only the student's part: the last frame
that lies in a cell the student wrote, with its line (read from the student's
own cell, not from the traceback's text). The grader's own frames (test cells,
hidden helpers, libraries) are never shown.

An exception that student code raised carries a message the student chose,
which can be anything the code could read: the source of the test that called
it, the notebook's history. :func:`raised_by_student` tells such a message from
a test's own verdict, and :func:`redact` removes from any text every line of
the hidden tests it spells out (white space ignored).
"""
from __future__ import annotations

import os
import re
import sysconfig
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import nbformat

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# IPython names a cell's code "Cell In[<execution count>], line <n>", then the lines around it, "---->" marking the line.
_CELL_FRAME = re.compile(r"^Cell In\[(?P<count>\d+)\], line (?P<line>\d+)(?:, in (?P<function>[^\n(]+))?")
_MARKED = re.compile(r"^-+> ?\s*(?P<number>\d+)\s?(?P<text>.*)$")
# Any other frame: "File /path/to/module.py:123, in function(...)".
_FILE_FRAME = re.compile(r"^\s*File (?P<path>.+?):\d+(?:, in |$)")
REDACTED = "[hidden test removed]"


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


def raised_by_student(notebook: nbformat.NotebookNode, traceback: list[str]) -> bool:
    """Whether the exception of `traceback` (an error output's list of strings) was raised by the student's code.

    It was if its innermost frame that is not library code lies in a cell
    the student wrote or added, or in code they made elsewhere (``exec``).
    If that frame lies in a cell the grader provides (a test or a given
    cell), the message is a test's verdict; a traceback with no frame at all
    is the grader's own (a dead kernel, tampering, a timeout).
    """
    by_count = {cell.get("execution_count"): cell for cell in notebook.cells
                if cell.cell_type == "code" and cell.get("execution_count") is not None}
    innermost = None  # True: a cell the grader provides; False: the student's code
    for entry in traceback:
        text = _ANSI.sub("", entry).lstrip()
        match = _CELL_FRAME.match(text)
        if match:
            cell = by_count.get(int(match["count"]))
            innermost = cell is not None and not _students(cell)
            continue
        match = _FILE_FRAME.match(text)
        if match and not _library(match["path"]):
            innermost = False
    return innermost is False


def squeeze(text: str) -> str:
    """`text` without white space and invisible characters (separators, control and format characters)."""
    return "".join(ch for ch in text if unicodedata.category(ch)[0] not in "ZC")


WINDOW = 32  # characters (white space removed) of a hidden test's code that are never shown, wherever they stand
# A string literal on one line (its quotes included).
_WORD = re.compile(r"\w+")
_STRING = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'")


@dataclass(frozen=True)
class Hidden:
    """What of the hidden tests no student may be shown, white space removed: whole lines, and every stretch of
    :data:`WINDOW` characters of their code, which finds a line cut short too. The words of the tests' messages
    (string literals with spaces) are left out of the stretches, so that the messages survive."""

    lines: tuple[str, ...] = ()
    windows: frozenset[str] = frozenset()

    @classmethod
    def of(cls, lines: Iterable[str], visible: str = "", min_chars: int = 12) -> Hidden:
        """The secrets of hidden-test source `lines`: those of at least `min_chars` characters (white space
        removed), and their code's windows, less what `visible` (the released notebook, squeezed) shows anyway."""
        whole, windows = set(), set()
        for line in lines:
            squeezed = squeeze(line)
            if len(squeezed) >= min_chars and squeezed not in visible:
                whole.add(squeezed)
            # A literal with spaces is prose, the words of a message; one without ("softmax", "float32") is code.
            code = _STRING.sub(lambda m: "\0" if re.search(r"\s", m.group(0)) else m.group(0), line)
            for segment in map(squeeze, code.split("\0")):
                # (A stretch inside one long name is no secret: an honest NameError names it.)
                windows.update(w for i in range(len(segment) - WINDOW + 1)
                               if not _WORD.fullmatch(w := segment[i:i + WINDOW]) and w not in visible)
        return cls(tuple(sorted(whole, key=len, reverse=True)), frozenset(windows))


def redact(text: str, hidden: Hidden | Iterable[str]) -> str:
    """`text` with every stretch that spells a hidden line, or :data:`WINDOW` characters of a hidden test's code,
    replaced by :data:`REDACTED`. `hidden` is a :class:`Hidden` or squeezed lines.

    White space and invisible characters are ignored both ways, so a line
    reindented, split over several lines or spaced out is found too.
    """
    if not isinstance(hidden, Hidden):
        hidden = Hidden(tuple(line for line in hidden if line))
    if not text or not (hidden.lines or hidden.windows):
        return text
    positions = [i for i, ch in enumerate(text) if unicodedata.category(ch)[0] not in "ZC"]
    squeezed = "".join(text[i] for i in positions)
    spans = []
    for line in hidden.lines:
        start = squeezed.find(line)
        while start != -1:
            spans.append((positions[start], positions[start + len(line) - 1] + 1))
            start = squeezed.find(line, start + 1)
    if hidden.windows:
        spans += [(positions[i], positions[i + WINDOW - 1] + 1) for i in range(len(squeezed) - WINDOW + 1)
                  if squeezed[i:i + WINDOW] in hidden.windows]
    if not spans:
        return text
    kept, end = [], 0
    for first, last in sorted(spans):
        if first >= end:
            kept += [text[end:first], REDACTED]
        end = max(end, last)
    return "".join(kept) + text[end:]
