"""The similarity report: pairs of answers that share more code than chance would, flagged for a human, never graded.

Per assignment, every student's answer cells (the solution cells, by grade id,
as :func:`autograde.intake.normalise.rebuild` finds them) are compared with
every other student's, with the reference solution's and with the book page's
code cells, by token fingerprints with winnowing (Schleimer, Wilkerson and
Aiken 2003, the method of MOSS and copydetect):

- Each answer cell is normalised on its syntax tree (:mod:`.code_tokens`): comments, layout, docstrings, dead
  code, imports and annotations go; every name the author binds is ``V`` (builtin names used as variables too),
  numbers ``N``, strings ``S``; a module is written by its name however imported (``xp.exp`` after ``import numpy
  as xp`` is ``numpy.exp``); builtins called, attributes and keyword arguments stay (``np.exp`` still differs from
  ``np.log``); appending loops are comprehensions (:mod:`.code_rewrite`) and independent statements take one
  canonical order. Code that does not parse is read by Pygments.
- Lines the released notebook gives in the answer cell (the signature, its
  docstring, ``raise NotImplementedError()``) are left out first: they would
  make every pair alike.
- Runs of :data:`K` tokens are fingerprinted by winnowing (:mod:`.fingerprints`).
- Fingerprints are weighted by rarity, ``log((students + 1) / students who
  have it)``: how the whole class writes a step weighs almost nothing, what
  two students alone share weighs most (as search engines weigh words); the
  pairs are scored in :mod:`.pairs`.

A side's share is the weight of the fingerprints it shares with the other over
the weight of all of its own: a verbatim or disguised copy scores 100% however
common its lines, and a student who copied half of another's answers shows as
their own share. A pair's similarity is the larger share. Pairs at or above
``c.Similarity.threshold`` whose shared runs cover at least
``c.Similarity.min_tokens`` tokens are written to ``similarity.csv`` and, with
the matching lines side by side, to ``similarity.html``. So is a pair with a
copied cell (:func:`copied_cells`), however little else they share: a long
cell nearly all of whose runs the other has, half of them had by no third
student nor the book. Nothing here reads or changes a score.
"""
from __future__ import annotations

import csv
import logging
import time
from collections import defaultdict
from pathlib import Path

import nbformat
from traitlets import Bool, Float, Integer
from traitlets.config import Configurable

from ..course import EXERCISES, REPO, answer_names, source_notebook
from ..intake.lms import spreadsheet_cell
from ..intake.normalise import Unreadable, read_submission, rebuild
from ..reference import solution_code
from .code_tokens import contexts
from .fingerprints import BOOK, REFERENCE, STUDENT, WINDOW, Answers, K, make_answers
from .pairs import CopiedCell, Pair, compare, copied_cells
from .render import render

__all__ = ["CSV", "HTML", "CopiedCell", "Pair", "Similarity", "compare", "copied_cells", "read_answers",
           "write_similarity"]

log = logging.getLogger(__name__)

CSV, HTML = "similarity.csv", "similarity.html"
SHOWN_PAIRS = 100  # pairs drawn side by side in the HTML per assignment, and those with a copied cell (the CSV: all)


class Similarity(Configurable):
    """The similarity report (``c.Similarity.<name>`` in nbgrader_config.py; it never changes a grade)."""

    # (grades=False: not in the results' cache key, so changing them regrades nothing)
    enabled = Bool(True, help="write similarity.csv and similarity.html beside the grades (--no-similarity: off)"
                   ).tag(config=True, grades=False)
    threshold = Float(0.7, help="flag a pair when at least this share of one side's fingerprints, weighted by "
                                "rarity, is found in the other's (a copy however disguised: 1.0)"
                      ).tag(config=True, grades=False)
    min_tokens = Integer(40, help="flag a pair only when the runs they share cover at least this many tokens (short "
                                  "answers coincide by chance)").tag(config=True, grades=False)
    cell_tokens = Integer(40, help="report a copied cell only when it has at least this many tokens (short cells "
                                   "have few ways to be written)").tag(config=True, grades=False)
    cell_share = Float(0.9, help="report a cell as copied when at least this share of its tokens is in runs the "
                                 "other author has, half of it in runs no third student has"
                       ).tag(config=True, grades=False)


# ---------------------------------------------------------------------------------------------------------------
# Reading an assignment's authors

def _code(nb: nbformat.NotebookNode) -> list[str]:
    return [c.source for c in nb.cells if c.get("cell_type") == "code" and isinstance(c.get("source"), str)]


def _given_lines(released_source: str) -> set[str]:
    return {line.strip() for line in released_source.splitlines() if line.strip()}


def _grade_id(cell) -> str | None:
    """A cell's nbgrader grade id; None where there is none, or the metadata is malformed (a submission may hold
    anything there)."""
    meta = cell.get("metadata", {})
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
    return grade_id if isinstance(grade_id, str) else None


def _answer_cells(nb: nbformat.NotebookNode) -> list[tuple[str, str]]:
    return [(c.metadata["nbgrader"]["grade_id"], c.source) for c in nb.cells
            if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")]


def read_answers(assignment: str, notebooks: dict[str, Path]) -> list[Answers]:
    """Every author of `assignment`: each student of `notebooks` (student id -> submitted notebook), rebuilt on the
    released notebook so that answer cells are found as grading finds them, then the reference solution and the
    book page's code cells. A file that holds no notebook, or no answer, is no author."""
    if not notebooks:
        return []
    released = nbformat.read(EXERCISES / assignment / f"{assignment}.ipynb", as_version=4)
    given = {label: _given_lines(source) for label, source in _answer_cells(released)}
    names = answer_names(assignment)
    tested = frozenset().union(*names.values())  # (the tests read these: assigning them is never dead code)
    authors = []
    for student, path in sorted(notebooks.items()):
        try:
            submitted, _ = read_submission(path)
            found = [(_grade_id(c), c.source) for c in submitted.cells
                     if c.cell_type == "code" and _grade_id(c) in given]
            if sorted(g for g, _ in found) != sorted(given):  # (rebuilding costs: only where an answer is not found once)
                rebuilt, _ = rebuild(submitted, released, names)
                found = _answer_cells(rebuilt)
            made = make_answers(student, STUDENT, found, given, contexts(_code(submitted), found, tested))
        except Unreadable:
            continue
        except Exception as error:  # (one odd notebook is left out, never the whole class's report)
            log.warning("similarity: %s's %s left out: %s: %s", student, assignment, type(error).__name__, error)
            continue
        if made.cells:
            authors.append(made)
    if not authors:
        return []  # (no answer to compare: the reference and the book are not read)
    source = source_notebook(assignment)
    reference = [(label, solution_code(code)) for label, code in _answer_cells(source)]
    code = [solution_code(c) for c in _code(source)]
    authors.append(make_answers(REFERENCE, REFERENCE, reference, given, contexts(code, reference, tested)))
    page = REPO / "book" / f"{assignment}.md"
    if page.is_file():
        import jupytext

        book = jupytext.read(page)
        cells = [(f"book cell {n}", c.source) for n, c in enumerate((c for c in book.cells if c.cell_type == "code"), 1)]
        made = make_answers(BOOK, BOOK, cells, {}, contexts([c for _, c in cells], cells, frozenset()))
        if made.cells:
            authors.append(made)
    return authors


# ---------------------------------------------------------------------------------------------------------------
# Writing

def _side(source: str, lines: set[int]) -> list[dict]:
    return [{"number": n, "text": text, "matched": n in lines} for n, text in enumerate(source.splitlines(), 1)]


def write_similarity(notebooks: dict[tuple[str, str], Path], assignments: list[str], out: Path,
                     settings: Similarity | None = None) -> dict:
    """Compare the answers of `notebooks` ((student, assignment) -> submitted notebook) for each of `assignments`;
    write ``out/similarity.csv`` and ``out/similarity.html``. Returns a summary for the report:
    ``{"pairs": flagged pairs, "threshold": ..., "seconds": ...}``."""
    settings = settings or Similarity()
    started = time.perf_counter()
    sections, rows = [], []
    for assignment in assignments:
        mine = {s: p for (s, a), p in notebooks.items() if a == assignment}
        authors = read_answers(assignment, mine)
        students = sum(a.kind == STUDENT for a in authors)
        copied = copied_cells(authors, settings.cell_tokens, settings.cell_share)
        pairs = compare(assignment, authors, settings.threshold, settings.min_tokens, {(c.a, c.b) for c in copied})
        cells = defaultdict(list)
        for c in copied:
            cells[c.a, c.b].append(c.label_a if c.label_a == c.label_b else f"{c.label_a}/{c.label_b}")
        found = [(p, "; ".join(cells.get((p.a, p.b), cells.get((p.b, p.a), [])))) for p in pairs]
        # (a pair with a copied cell is shown however low its similarity puts it)
        shown = [(p, c) for n, (p, c) in enumerate(found) if n < SHOWN_PAIRS or c]
        # (Student ids are the export's text: none may start a spreadsheet formula.)
        rows += [[p.assignment, spreadsheet_cell(p.a), spreadsheet_cell(p.b), p.kind, f"{p.similarity:.3f}", p.tokens,
                  spreadsheet_cell(p.cells), spreadsheet_cell(c)] for p, c in found]
        sections.append({
            "assignment": assignment, "students": students, "compared": students * (students - 1) // 2,
            "flagged": len(pairs), "shown": len(shown), "copied": sum(1 for _, c in found if c),
            "pairs": [{"a": p.a, "b": p.b, "kind": p.kind, "similarity": p.similarity, "share_a": p.share_a,
                       "share_b": p.share_b, "tokens": p.tokens, "cells": p.cells, "copied": c,
                       "matches": [{"label_a": m.label_a, "label_b": m.label_b, "a": _side(m.source_a, m.lines_a),
                                    "b": _side(m.source_b, m.lines_b)} for m in p.matches]}
                      for p, c in shown],
        })
    with open(out / CSV, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["assignment", "student_a", "student_b", "kind", "similarity", "matched_tokens",
                         "matched_cells", "copied_cells"])
        writer.writerows(rows)
    seconds = time.perf_counter() - started
    (out / HTML).write_text(render("similarity.html.j2", sections=sections, threshold=settings.threshold,
                                   min_tokens=settings.min_tokens, k=K, cell_tokens=settings.cell_tokens,
                                   cell_share=settings.cell_share, guaranteed=K + WINDOW - 1, seconds=seconds), encoding="utf-8")
    # (`out` is the run's fresh folder, swapped in for the output folder at the end: its name is not the one to show.)
    log.info("similarity: %d pair(s) at or above %.0f%% or with a copied cell, listed in %s (%.1f s)", len(rows),
             100 * settings.threshold, HTML, seconds)
    return {"pairs": len(rows), "threshold": settings.threshold, "file": HTML}
