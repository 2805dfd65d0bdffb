"""What of an error a student may see: the student's own line it came from, whose message it is, and no hidden test.

A traceback in an executed notebook runs through the test cell, the student's
cells and library code. Feedback shows only the student's part: the last frame
that lies in a cell the student wrote, with its line (read from the student's
own cell, not from the traceback's text). The grader's own frames (test cells,
hidden helpers, libraries) are never shown.

An exception that student code raised carries a message the student chose,
which can be anything the code could read: the source of the test that called
it, the notebook's history. :func:`graders_own_verdict` tells a test's own
verdict (shown at length) from any other message (shown as one short line),
and :func:`redact` removes from any text every line of the hidden tests it
spells out (white space, case, accents and look-alike letters ignored,
forwards or backwards).
"""
from __future__ import annotations

import functools
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
    frame at all is the grader's own (a dead kernel, tampering, a timeout).
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
    (a dead kernel, tampering, a timeout).
    """
    return set(_frames(notebook, traceback)) <= {"grader"}


def squeeze(text: str) -> str:
    """`text` without white space and invisible characters (separators, control and format characters)."""
    return "".join(ch for ch in text if unicodedata.category(ch)[0] not in "ZC")


# Letters of other alphabets that look like Latin ones (after case folding), as a student would type them to spell a
# hidden line that a plain comparison misses. Unicode's compatibility decomposition (NFKD) already takes care of
# fullwidth, ligatures, mathematical alphabets and the like.
CONFUSABLES = str.maketrans({
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "з": "3", "і": "i", "ї": "i", "ј": "j", "к": "k", "м": "m", "н": "h",
    "о": "o", "п": "n", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w",
    "һ": "h", "ӏ": "l", "ь": "b", "г": "r",
    # Greek
    "α": "a", "β": "b", "γ": "y", "ε": "e", "η": "n", "ι": "i", "κ": "k", "μ": "u", "ν": "v", "ο": "o", "ρ": "p",
    "σ": "o", "ς": "c", "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ζ": "z",
    # Latin letters, digits and punctuation that pass for others
    "ı": "i", "ɡ": "g", "ɑ": "a", "ℓ": "l", "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "−": "-",
    "‘": "'", "’": "'", "‚": "'", "“": '"', "”": '"', "„": '"', "´": "'", "`": "'",
})


@functools.lru_cache(maxsize=4096)
def _folded(ch: str) -> str:
    """What the character `ch` stands for when text is compared: see :func:`fold` ("" for an invisible one)."""
    if unicodedata.category(ch)[0] in "ZC":
        return ""
    # Compatibility decomposition, combining marks dropped (an accent or a stroke overlay added to every letter).
    plain = "".join(c for c in unicodedata.normalize("NFKD", ch) if unicodedata.category(c)[0] not in "MZC")
    return unicodedata.normalize("NFKC", plain.casefold()).translate(CONFUSABLES)


def fold(text: str) -> str:
    """`text` as redaction compares it: squeezed (:func:`squeeze`), compatibility-normalised (NFKD, combining marks dropped),
    case-folded, and with look-alike letters of other alphabets read as the Latin ones (:data:`CONFUSABLES`)."""
    return "".join(_folded(ch) for ch in text)


WINDOW = 32  # characters (white space removed) of a hidden test's code that are never shown, wherever they stand
# A string literal on one line (its quotes included).
_WORD = re.compile(r"\w+")
_STRING = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'")


@dataclass(frozen=True)
class Hidden:
    """What of the hidden tests no student may be shown, folded (:func:`fold`): whole lines, and every stretch of
    :data:`WINDOW` characters of their code, which finds a line cut short too. The words of the tests' messages
    (string literals with spaces) are left out of the stretches, so that the messages survive."""

    lines: tuple[str, ...] = ()
    windows: frozenset[str] = frozenset()

    @classmethod
    def of(cls, lines: Iterable[str], visible: str = "", min_chars: int = 12) -> Hidden:
        """The secrets of hidden-test source `lines`: those of at least `min_chars` characters (white space
        removed), and their code's windows, less what `visible` (the released notebook) shows anyway."""
        visible = fold(visible)
        whole, windows = set(), set()
        for line in lines:
            folded = fold(line)
            if len(folded) >= min_chars and folded not in visible:
                whole.add(folded)
            # A literal with spaces is prose, the words of a message; one without ("softmax", "float32") is code.
            code = _STRING.sub(lambda m: "\0" if re.search(r"\s", m.group(0)) else m.group(0), line)
            for segment in map(fold, code.split("\0")):
                # (A stretch inside one long name is no secret: an honest NameError names it.)
                windows.update(w for i in range(len(segment) - WINDOW + 1)
                               if not _WORD.fullmatch(w := segment[i:i + WINDOW]) and w not in visible)
        return cls(tuple(sorted(whole, key=len, reverse=True)), frozenset(windows))


def _spans(folded: str, hidden: Hidden) -> list[tuple[int, int]]:
    """(start, end) in `folded` of every hidden line and window it contains."""
    spans = []
    for line in hidden.lines:
        start = folded.find(line)
        while start != -1:
            spans.append((start, start + len(line)))
            start = folded.find(line, start + 1)
    if hidden.windows:
        spans += [(i, i + WINDOW) for i in range(len(folded) - WINDOW + 1) if folded[i:i + WINDOW] in hidden.windows]
    return spans


def redact(text: str, hidden: Hidden | Iterable[str]) -> str:
    """`text` with every stretch that spells a hidden line, or :data:`WINDOW` characters of a hidden test's code,
    replaced by :data:`REDACTED`. `hidden` is a :class:`Hidden` or squeezed lines.

    Both sides are compared folded (:func:`fold`): white space, invisible characters,
    case, accents and look-alike letters ignored, so a line reindented, split over
    several lines, spaced out, in capitals or in Cyrillic is found too; and read
    backwards as well, which finds a line (or each line of a text) reversed.
    """
    if not isinstance(hidden, Hidden):
        hidden = Hidden(tuple(fold(line) for line in hidden if line))
    if not text or not (hidden.lines or hidden.windows):
        return text
    # Each character of the folded text, with the position in `text` of the character it came from.
    positions, folded = [], []
    for i, ch in enumerate(text):
        for c in _folded(ch):
            positions.append(i)
            folded.append(c)
    forwards = "".join(folded)
    n = len(forwards)
    spans = [(positions[a], positions[b - 1] + 1) for a, b in _spans(forwards, hidden)]
    # Backwards: a stretch [a, b) of the reversed text is [n - b, n - a) of the text.
    spans += [(positions[n - b], positions[n - a - 1] + 1) for a, b in _spans(forwards[::-1], hidden)]
    if not spans:
        return text
    kept, end = [], 0
    for first, last in sorted(spans):
        if first >= end:
            kept += [text[end:first], REDACTED]
        end = max(end, last)
    return "".join(kept) + text[end:]
