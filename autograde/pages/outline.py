"""The outline of an exercise notebook: its exercises, their points and what each test cell checks.

Feedback groups a student's results by exercise, under the exercise's own title,
and describes each test cell in words. Both come from the notebook itself:

- an exercise starts at a markdown heading ``## N. Title (k points)``; a heading
  that groups several exercises (``## 3–5. Three similarity scores``) is split by
  the bold paragraphs inside it (``**3. Dot product (2 points).**``);
- a test cell's description is the comment line its source opens with
  (``# Hidden tests: an all -inf slice gives zeros, not nan.``), which the
  student's notebook shows too; the test code itself is never read out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import nbformat

from ..cells import CellKind, cell_kind, visibility

_HEADING = re.compile(r"^##\s+(?P<number>\d+(?:\s*[–-]\s*\d+)?)\.\s+(?P<title>.+?)\s*(?:\((?P<points>[\d.]+) points?\))?\s*$",
                      re.MULTILINE)
_BOLD = re.compile(r"^\*\*(?P<number>\d+)\.\s+(?P<title>[^*]+?)\s*(?:\((?P<points>[\d.]+) points?\))?\.?\*\*", re.MULTILINE)
_KIND = re.compile(r"^(?P<kind>(?:visible|hidden)(?: and hidden)? tests?)(?: \([^)]*\))?:\s*", re.IGNORECASE)


@dataclass
class Check:
    """One autograded cell: its grade id, its points and what it checks, in words."""

    grade_id: str
    points: float
    description: str
    visibility: str = "visible"  # autograde.cells.visibility: "visible", "hidden" or "visible and hidden"

    @property
    def hidden(self) -> bool:
        """Whether the cell holds hidden tests (its output is withheld where results are published later)."""
        return self.visibility != "visible"


@dataclass
class Exercise:
    """An exercise of the notebook: ``number`` as printed ("3"), its title, stated points and test cells."""

    number: str
    title: str
    stated_points: float | None
    tests: list[Check] = field(default_factory=list)

    @property
    def points(self) -> float:
        """The points its test cells carry (what the grade counts)."""
        return sum(t.points for t in self.tests)


def describe(source: str) -> tuple[str, bool]:
    """(description, hidden) of a test cell, from the comment line its source opens with.

    The kind ("Visible test:", "Hidden tests (hypothesis):") is dropped from the
    words and returned as `hidden`; further comment lines are notes for the
    reader of the notebook, not part of the description. The description is
    "" when the cell opens with no comment.
    """
    first = source.lstrip().split("\n", 1)[0]
    if not first.startswith("#") or first.startswith("###"):
        return "", False
    text = first.lstrip("#").strip()
    match = _KIND.match(text)
    kind = match.group("kind").lower() if match else ""
    hidden = kind.startswith("hidden")
    if match:
        text = text[match.end():]
    word = text.split(" ", 1)[0]
    if word.isalpha() and word.islower() and (len(word) > 1 or word == "a"):  # a word, not a name from the code
        text = text[0].upper() + text[1:]
    return text, hidden


def outline(notebook: nbformat.NotebookNode) -> list[Exercise]:
    """The exercises of `notebook` in order, each with the test cells that follow its heading.

    Test cells before the first heading form an exercise numbered "" titled "Setup".
    """
    exercises: list[Exercise] = []
    current: Exercise | None = None
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "markdown":
            for match in sorted([*_HEADING.finditer(cell.source), *_BOLD.finditer(cell.source)], key=lambda m: m.start()):
                points = match.group("points")
                current = Exercise(re.sub(r"\s+", "", match.group("number")), match.group("title").strip(),
                                   float(points) if points else None)
                exercises.append(current)
        elif cell_kind(cell) == CellKind.TEST:
            if current is None:
                current = Exercise("", "Setup", None)
                exercises.append(current)
            description, _ = describe(cell.source)
            current.tests.append(Check(meta["grade_id"], float(meta.get("points", 0)), description,
                                       visibility(cell)))
    return [e for e in exercises if e.tests]
