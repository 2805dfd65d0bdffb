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
  two students alone share weighs most (as search engines weigh words).

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
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import nbformat
from traitlets import Bool, Float, Integer
from traitlets.config import Configurable

from ..course import EXERCISES, REPO, answer_names, source_notebook
from ..intake.lms import spreadsheet_cell
from ..intake.normalise import Unreadable, read_submission, rebuild
from ..reference import solution_code
from .code_tokens import contexts
from .fingerprints import WINDOW, Answers, Cell, K, make_answers, runs
from .render import render

__all__ = ["CSV", "HTML", "CopiedCell", "Pair", "Similarity", "compare", "copied_cells", "read_answers",
           "write_similarity"]

log = logging.getLogger(__name__)

CSV, HTML = "similarity.csv", "similarity.html"
REFERENCE, BOOK = "reference", "book"  # the authors that are no student (the kind column tells them apart)
BLOCK = 512  # students whose pairs are scored at once
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
            made = make_answers(student, "student", found, given, contexts(_code(submitted), found, tested))
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
# Comparing

@dataclass
class Match:
    """Where two authors' cells share runs: the cells' labels and sources, and the lines of each that the runs cover."""

    label_a: str
    label_b: str
    source_a: str
    source_b: str
    lines_a: set[int]
    lines_b: set[int]


@dataclass
class Pair:
    """Two authors whose answers share runs: their similarity (the larger share of tokens covered) and where."""

    assignment: str
    a: str
    b: str
    kind: str  # what b is: "student", REFERENCE or BOOK
    similarity: float
    share_a: float
    share_b: float
    tokens: int  # tokens of the smaller side covered by shared runs
    matches: list[Match]

    @property
    def cells(self) -> str:
        """The matched cells, as ``softmax`` (the same cell on both sides) or ``softmax/book cell 3``."""
        return "; ".join(dict.fromkeys(m.label_a if m.label_a == m.label_b else f"{m.label_a}/{m.label_b}"
                                       for m in self.matches))


def _covered(author: Answers, shared: set[int], k: int = K) -> dict[int, set[int]]:
    """Per cell of `author` (by index), the tokens that its runs in `shared` cover."""
    covered: dict[int, set[int]] = defaultdict(set)
    for h in shared:
        for cell, start in author.grams[h]:
            covered[cell].update(range(start, start + k))
    return covered


def _lines(cell: Cell, tokens: set[int]) -> set[int]:
    """The lines of `cell` the statements of its `tokens` (by position) lie on."""
    return {n for p in tokens for n in range(cell.lines[p][0], cell.lines[p][1] + 1)}


def _pair(assignment: str, a: Answers, b: Answers, shared: set[int], shares: tuple[float, float], k: int = K) -> Pair:
    """The pair `a`, `b`, their weighted `shares`, and where their `shared` runs lie: each cell of `a` where they
    cover at least ``K + WINDOW - 1`` tokens and 30% of it, beside the cell of `b` it shares most runs with."""
    covered_a, covered_b = _covered(a, shared, k), _covered(b, shared, k)
    partners: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for h in shared:
        for ca in {c for c, _ in a.grams[h]}:
            for cb in {c for c, _ in b.grams[h]}:
                partners[ca][cb] += 1
    matches = []
    for ca, tokens_a in sorted(covered_a.items()):
        if len(tokens_a) < max(k + WINDOW - 1, 0.3 * len(a.cells[ca].symbols)):
            continue  # (a line or two that many answers have: not where the copy is)
        cb = max(partners[ca], key=lambda c: (partners[ca][c], -c))
        lines_a = _lines(a.cells[ca], tokens_a)
        lines_b = _lines(b.cells[cb], covered_b[cb])
        matches.append(Match(a.cells[ca].label, b.cells[cb].label, a.cells[ca].source, b.cells[cb].source,
                             lines_a, lines_b))
    tokens = min(sum(map(len, covered_a.values())), sum(map(len, covered_b.values())))
    return Pair(assignment, a.author, b.author, b.kind, max(shares), shares[0], shares[1], tokens, matches)


def compare(assignment: str, authors: list[Answers], threshold: float = 0.7, min_tokens: int = 40,
            also: set[tuple[str, str]] = frozenset()) -> list[Pair]:
    """The pairs of `authors` (students with each other, each student with the reference and the book) whose
    similarity is at least `threshold` with at least `min_tokens` tokens in shared runs, and the pairs of `also`
    (two authors' names, in either order) whatever their similarity, highest first.

    A fingerprint's weight is ``log((students + 1) / students who have it)``:
    what the whole class writes weighs almost nothing, what two students alone
    share weighs most. A side's share is the weight of the fingerprints it
    shares over the weight of all of its own (a verbatim copy: 100%, however
    common its lines); the similarity is the larger share. The pairs are scored
    by sparse products (authors × fingerprints, weighted, times its transpose),
    :data:`BLOCK` students at a time; the lines shown are those every shared
    run of K tokens covers.
    """
    import numpy as np
    from scipy import sparse

    students = [s for s in authors if s.kind == "student"]
    others = [s for s in authors if s.kind != "student"]
    if not students:
        return []
    column: dict[int, int] = {}
    rows, cols = [], []
    for row, author in enumerate(students + others):
        for h in author.prints:
            rows.append(row)
            cols.append(column.setdefault(h, len(column)))
    every = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(students) + len(others), len(column)))
    held = np.asarray(every[:len(students)].sum(axis=0)).ravel()  # students who wrote each run
    weight = np.log((len(students) + 1) / np.maximum(held, 1))
    weighted = every.multiply(weight).tocsr()
    totals = np.asarray(weighted.sum(axis=1)).ravel()
    n, everyone = len(students), students + others
    safe = np.where(totals > 0, totals, np.inf)  # (an author with no fingerprint shares nothing)
    position = {x.author: i for i, x in enumerate(everyone)}
    wanted = {tuple(sorted((position[a], position[b]))) for a, b in also if a in position and b in position}
    pairs = []
    for start in range(0, n, BLOCK):  # (rows of students a block at a time: memory grows with the class, not its square)
        stop = min(n, start + BLOCK)
        shared = (weighted[start:stop] @ every.T).toarray()  # [i, j]: the weight of the fingerprints i and j share
        # [i, j]: i's share found in j, and j's found in i (the product is symmetric); rounded, as the sums of
        # weights in another order differ in the last bits (all of one's fingerprints is a share of 1)
        mine = np.minimum(np.round(shared / safe[start:stop, None], 9), 1.0)
        theirs = np.minimum(np.round(shared / safe[None, :], 9), 1.0)
        listed = np.maximum(mine, theirs) >= threshold
        for i, j in wanted:
            if start <= i < stop:
                listed[i - start, j] = True
        for row, j in zip(*np.nonzero(listed)):
            i = start + int(row)
            if j > i:  # (each pair of students once; the reference and the book come after them)
                a, b = everyone[i], everyone[j]
                pair = _pair(assignment, a, b, a.grams.keys() & b.grams.keys(),
                             (float(mine[row, j]), float(theirs[row, j])))
                if pair.tokens >= min_tokens or (i, int(j)) in wanted:
                    pairs.append(pair)
    return sorted(pairs, key=lambda p: (-p.similarity, -p.tokens, p.a, p.b))


@dataclass(frozen=True)
class CopiedCell:
    """A long cell of `a` (or of `b`) that is a copy: its runs of K tokens are nearly all in `b`'s code, and many
    are, of all the students, in `a`'s and `b`'s alone (`b` may be the reference or the book: then in `a`'s alone)."""

    a: str
    b: str
    label_a: str
    label_b: str  # the cell of `b` that holds most of those runs
    share: float  # the share of the cell's tokens covered by runs both have
    alone: float  # the share covered by runs no other student has
    tokens: int  # the cell's tokens


def copied_cells(authors: list[Answers], min_tokens: int = 40, share: float = 0.9, alone: float = 0.5
                 ) -> list[CopiedCell]:
    """The copied cells of `authors` (as :func:`read_answers` gives them): each student's cell of at least
    `min_tokens` tokens of which at least `share` are covered by runs another author has too, and at least `alone`
    by runs that no third student, and not the book, has. Ordered by pair (as `authors` are), then cell.

    Whole notebooks hide a copy of two cells among seven of one's own; a cell does not. The runs two students alone
    have are the evidence (a way of writing a step that others found too is none, however long); the lines a copied
    cell shares with the rest of the class (the usual first line) are covered by the runs both have.
    """
    students = [x for x in authors if x.kind == "student"]
    holders: dict[int, list[int]] = defaultdict(list)
    for i, x in enumerate(students):
        for h in x.grams:
            if len(holders[h]) < 3:  # (a third holder is enough to know it is no pair's alone)
                holders[h].append(i)
    others = [x for x in authors if x.kind != "student"]
    public = set().union(*(x.grams.keys() for x in others if x.kind == BOOK))  # (the book's code is for all to use)
    order = {x.author: n for n, x in enumerate(authors)}
    found: dict[tuple[str, str, str, str], CopiedCell] = {}
    for i, x in enumerate(students):
        rare: dict[tuple[int, int], set[int]] = defaultdict(set)  # (partner in authors, cell of x) -> tokens
        for h, places in x.grams.items():
            held = holders[h]
            if h in public:
                continue
            if len(held) == 2:
                partners = [students[held[0] if held[1] == i else held[1]]]
            elif len(held) == 1:
                partners = [o for o in others if h in o.grams]
            else:
                continue
            for partner in partners:
                for cell, start in places:
                    rare[(order[partner.author], cell)].update(range(start, start + K))
        for (p, cell), tokens in rare.items():
            symbols, partner = x.cells[cell].symbols, authors[p]
            if len(symbols) < min_tokens or len(tokens) < alone * len(symbols):
                continue
            both = [h for h in runs(symbols) if h in partner.grams]
            covered = {t for q, h in enumerate(runs(symbols)) if h in partner.grams for t in range(q, q + K)}
            if len(covered) < share * len(symbols):
                continue
            held_by = Counter(c for h in both for c, _ in partner.grams[h])
            other = partner.cells[max(held_by, key=lambda c: (held_by[c], -c))].label
            mine = (x.author, partner.author, x.cells[cell].label, other)
            key = mine if order[x.author] < p else (mine[1], mine[0], mine[3], mine[2])
            if key not in found or found[key].share < len(covered) / len(symbols):
                found[key] = CopiedCell(*key, len(covered) / len(symbols), len(tokens) / len(symbols), len(symbols))
    return sorted(found.values(), key=lambda c: (order[c.a], order[c.b], c.label_a, c.label_b))


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
        students = sum(a.kind == "student" for a in authors)
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
