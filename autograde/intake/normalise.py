"""Rebuild a submitted notebook on the released one, so that damage to its structure costs nothing.

Students copy cells (two cells with one grade id: nbgrader aborts), delete or
move test cells, paste their code into a fresh notebook (no nbgrader metadata
at all), or add cells of their own. :func:`rebuild` returns the released
notebook, in its order and with its metadata, with each answer cell replaced by
the student's answer; cells the student added keep their place after the cell
they followed. nbgrader then restores test cells and checks as usual.

How a student cell is matched to an answer cell:
1. by its nbgrader grade id (the first cell with that id; later copies become
   plain code cells that still run);
2. without a grade id, by the names it defines: the answer cell whose
   reference solution defines the most of the same names (``def softmax`` is
   the answer ``softmax``);
3. a cell identical to a released cell (a given cell or a test) is that cell.
"""
from __future__ import annotations

import copy
import json
import logging
from pathlib import Path

import nbformat

from ..cells import CellKind, cell_kind
from ..sources import defined_names
from ..text import first_line

log = logging.getLogger(__name__)


class Unreadable(ValueError):
    """A submitted file that holds no notebook that can be graded (empty, not JSON, no cells)."""


def read_submission(path: Path) -> tuple[nbformat.NotebookNode, list[str]]:
    """The notebook in the file `path`, and notes on any salvage; raises :class:`Unreadable` (saying why) if none.

    A file that is JSON with cells but breaks the notebook format (hand-edited,
    written by an odd tool) is salvaged: its cells are kept, the rest dropped
    (:func:`salvage`).
    """
    data = Path(path).read_bytes()
    if not data.strip():
        raise Unreadable("the submitted file is empty")
    try:
        content = json.loads(data)
    except ValueError as e:
        raise Unreadable(f"the submitted file is not a notebook (not valid JSON: {first_line(e)})") from None
    try:
        nb = nbformat.reads(data.decode("utf-8", errors="replace"), as_version=4)
        nbformat.validate(nb)
        return nb, []
    except Exception as e:  # nbformat raises several kinds of errors for malformed notebooks
        problem = first_line(e)
    nb = salvage(content)
    if nb is None:
        raise Unreadable(f"the submitted file is not a valid notebook ({problem})")
    log.debug("%s breaks the notebook format (%s): its cells were salvaged", path, problem)
    return nb, [f"Your file did not follow the notebook format ({problem}). Its cells were read and graded; "
                "their outputs and other metadata were dropped."]


def _nbgrader(cell) -> dict:
    """A cell's nbgrader metadata; {} where it is missing or malformed (a submission may hold anything there)."""
    meta = cell.get("metadata", {}).get("nbgrader")
    if not isinstance(meta, dict) or not isinstance(meta.get("grade_id", ""), str):
        return {}
    return meta


def _lines(source: str) -> list[str]:
    """A cell's source as lines without trailing blanks: what an editor may change unasked does not count."""
    return [line.rstrip() for line in source.strip().splitlines()]


def salvage(content) -> nbformat.NotebookNode | None:
    """A valid notebook with the cells of `content`, parsed JSON that nbformat rejects; None if it has no cells.

    Only what grading needs is kept: each cell's type, source and nbgrader
    metadata. Outputs, attachments and other metadata, where the schema
    violations usually are, are dropped: grading runs every cell again.
    (A valid notebook of an older format never gets here: nbformat converts it.)
    """
    if not isinstance(content, dict):
        return None
    cells = content.get("cells")
    if not isinstance(cells, list) or not cells:
        return None
    nb = nbformat.v4.new_notebook()
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", "")
        source = "".join(map(str, source)) if isinstance(source, list) else source
        if not isinstance(source, str):
            continue
        make = {"code": nbformat.v4.new_code_cell, "raw": nbformat.v4.new_raw_cell}.get(
            cell.get("cell_type"), nbformat.v4.new_markdown_cell)
        new = make(source)
        meta = _nbgrader(cell) if isinstance(cell.get("metadata"), dict) else {}
        if meta:
            new.metadata["nbgrader"] = meta
        nb.cells.append(new)
    return nb if nb.cells else None


def rebuild(submitted: nbformat.NotebookNode, released: nbformat.NotebookNode,
            solution_names: dict[str, set[str]]) -> tuple[nbformat.NotebookNode, list[str]]:
    """The released notebook with the student's answers and own cells; and what was repaired (sentences).

    `solution_names` maps each answer cell's grade id to the names its
    reference solution defines (see :func:`autograde.sources.defined_names`).
    """
    answers = {_nbgrader(c)["grade_id"]: c for c in released.cells if _nbgrader(c).get("solution")}
    other_ids = {_nbgrader(c).get("grade_id") for c in released.cells if _nbgrader(c).get("grade_id")} - set(answers)
    released_sources = {c.source.strip() for c in released.cells}
    released_by_id = {_nbgrader(c)["grade_id"]: c for c in released.cells if _nbgrader(c).get("grade_id")}
    chosen: dict[str, nbformat.NotebookNode] = {}
    added: dict[str | None, list] = {}  # grade id of the released cell a student cell follows -> its own cells
    notes: list[str] = []
    anchor = None
    seen: set[str] = set()
    unlabelled = 0
    labelled = {_nbgrader(c).get("grade_id") for c in submitted.cells}  # answers that carry their grade id somewhere
    for cell in submitted.cells:
        grade_id = _nbgrader(cell).get("grade_id")
        if grade_id in answers:
            if grade_id not in chosen and cell.cell_type == answers[grade_id].cell_type:
                chosen[grade_id], anchor = cell, grade_id
                continue
            notes.append(f"Your notebook has a second cell with grade id {grade_id!r} (a copy of your answer cell): "
                         "only the first counts as your answer; the copy was run as ordinary code.")
        elif grade_id in other_ids:
            if grade_id in seen:
                notes.append(f"Your notebook has a copy of the given or test cell {grade_id!r}: the copy was left out.")
            elif _lines(cell.source) != _lines(released_by_id[grade_id].source):
                kind = cell_kind(released_by_id[grade_id])
                notes.append(f"The text {grade_id!r} had been edited: the original was kept instead (edits to the "
                             "instructions do not count)." if kind == CellKind.TEXT else
                             f"The {kind} cell {grade_id!r} had been edited: the original was run instead "
                             "(edits to given and test cells do not count).")
            seen.add(grade_id)
            anchor = grade_id  # the released version of a given or test cell is used
            continue
        elif cell.source.strip() in released_sources:
            continue  # a given cell that lost its metadata
        elif cell.cell_type == "code":
            names = set(defined_names(cell.source))
            overlap = {g: len(names & solution_names.get(g, set())) for g in answers
                       if g not in chosen and g not in labelled}
            best = max(overlap, key=overlap.get, default=None)
            if best is not None and overlap[best] > 0:
                chosen[best], anchor = cell, best
                unlabelled += 1
                continue
        extra = copy.deepcopy(cell)
        extra.metadata.pop("nbgrader", None)
        added.setdefault(anchor, []).append(extra)
    if unlabelled:
        notes.append(f"{unlabelled} of your answer cell(s) had lost their nbgrader labels (as when code is pasted into "
                     "a new notebook); each was matched to its exercise by the names it defines.")
    cells = list(added.get(None, []))
    for cell in released.cells:
        grade_id = _nbgrader(cell).get("grade_id")
        cell = copy.deepcopy(cell)
        if grade_id in chosen:
            cell.source = chosen[grade_id].source
        cells.append(cell)
        cells.extend(added.get(grade_id, []))
    missing = other_ids - seen
    if missing and seen:  # (a notebook with no metadata at all lost nothing on purpose)
        notes.append(f"{len(missing)} given or test cell(s) were missing from your notebook; the originals were put back.")
    out = copy.deepcopy(released)
    for index, cell in enumerate(cells):
        cell["id"] = _nbgrader(cell).get("grade_id") or f"cell-{index}"
    out.cells = cells
    return out, notes
