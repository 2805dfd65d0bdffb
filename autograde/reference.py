"""The reference solutions as importable code, for the book pages and benchmarks that need them.

It runs an assignment's setup and solution cells (not its test cells) from the
single source ``solutions/<a>/<a>.py``, so no second copy of a solution exists.
Only jupytext is needed, not nbgrader.
"""
from __future__ import annotations

import re
from pathlib import Path

import jupytext

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"
_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)


def solution_code(source: str) -> str:
    """A solution cell's source with the solution markers removed (what a perfect student writes)."""
    return _MARKER.sub("", source)


def load_reference(assignment: str, skip: tuple[str, ...] = ()) -> dict:
    """Run the non-test code cells of `assignment` with the solutions filled in; return their namespace.

    Cells whose grade id is in `skip` are not run (e.g. a long training run).
    """
    nb = jupytext.read(SOLUTIONS / assignment / f"{assignment}.py")
    namespace: dict = {"__name__": f"reference_{assignment.replace('-', '_')}"}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and not meta.get("grade") and meta.get("grade_id") not in skip:
            exec(compile(solution_code(cell.source), f"{assignment}:{meta.get('grade_id', '?')}", "exec"), namespace)
    return namespace
