"""The similarity report: pairs of answers that share more code than chance would, flagged for a human, never graded.

Per assignment, every student's answer cells (the solution cells, by grade id,
as :func:`autograde.intake.normalise.rebuild` finds them) are compared with
every other student's, with the reference solution's and with the book page's
code cells, by token fingerprints with winnowing (Schleimer, Wilkerson and
Aiken 2003, the method of MOSS and copydetect):

- Python is tokenised with Pygments (it reads broken code too); comments,
  layout and docstrings go; every number is ``N`` and every string ``S``; every
  name the author chose (variables, parameters, functions, classes) is ``V``,
  while keywords, builtins, the libraries' names (``np``), attributes
  (``.exp``) and keyword arguments (``keepdims=``) stay as written: renaming
  variables or changing constants hides nothing, and ``np.exp`` still differs
  from ``np.log``.
- Lines the released notebook gives in the answer cell (the signature, its
  docstring, ``raise NotImplementedError()``) are left out first: they would
  make every pair alike.
- Every run of :data:`K` tokens is hashed; in each window of :data:`WINDOW`
  consecutive hashes the smallest is kept (a shared run of ``K + WINDOW - 1``
  tokens is always found). Runs never cross a cell's end, and a notebook's
  fingerprints are a set: cells in another order, or an answer moved into
  another cell, still match.
- Fingerprints are weighted by rarity, ``log((students + 1) / students who
  have it)``: how the whole class writes a step weighs almost nothing, what
  two students alone share weighs most (as search engines weigh words).

A side's share is the weight of the fingerprints it shares with the other over
the weight of all of its own: a verbatim or disguised copy scores 100% however
common its lines, and a student who copied half of another's answers shows as
their own share. A pair's similarity is the larger share. Pairs at or above
``c.Similarity.threshold`` whose shared runs cover at least
``c.Similarity.min_tokens`` tokens are written to ``similarity.csv`` and, with
the matching lines side by side, to ``similarity.html``. Nothing here reads or
changes a score.
"""
from __future__ import annotations

import ast
import bisect
import csv
import functools
import logging
import time
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from traitlets import Bool, Float, Integer
from traitlets.config import Configurable

from ..course import EXERCISES, REPO, answer_names, source_notebook
from ..intake.lms import spreadsheet_cell
from ..intake.normalise import Unreadable, read_submission, rebuild
from ..reference import solution_code
from .render import render

__all__ = ["CSV", "HTML", "K", "WINDOW", "Answers", "Pair", "Similarity", "compare", "fingerprints",
           "read_answers", "tokens", "write_similarity"]

log = logging.getLogger(__name__)

CSV, HTML = "similarity.csv", "similarity.html"
K = 8  # tokens per fingerprinted run: shorter shared runs are noise (``return V @ V . T`` is 6)
WINDOW = 4  # hashes per winnowing window: every shared run of K + WINDOW - 1 = 11 tokens is found
LIBRARIES = frozenset({"np", "numpy", "torch", "nn", "F", "math", "plt", "scipy", "functional"})
REFERENCE, BOOK = "reference", "book"  # the authors that are no student (the kind column tells them apart)
BLOCK = 512  # students whose pairs are scored at once
SHOWN_PAIRS = 100  # pairs drawn side by side in the HTML per assignment (the CSV has them all)


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


# ---------------------------------------------------------------------------------------------------------------
# Tokens and fingerprints

@dataclass(frozen=True)
class Cell:
    """One cell of code: its label (grade id, or ``book cell N``), its source, its tokens and each token's line."""

    label: str
    source: str
    symbols: tuple[int, ...]  # the normalised tokens, each as a stable 32-bit number
    lines: tuple[int, ...]  # the line (from 1) of each token in `source`


@dataclass
class Answers:
    """One author's code for one assignment (a student's answer cells, the reference's, or the book's cells)."""

    author: str
    kind: str  # "student", REFERENCE or BOOK
    cells: list[Cell]
    # the hash of every run of K tokens -> where it starts: (index of the cell, index of the run's first token)
    grams: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    prints: set[int] = field(default_factory=set)  # the winnowed fingerprints: what the pairs are scored on


def _symbol(text: str) -> int:
    return zlib.crc32(text.encode())  # (stable across runs, unlike str's salted hash)


@functools.cache
def _lexer():
    from pygments.lexers import PythonLexer

    return PythonLexer()


def tokens(source: str, libraries: frozenset[str] = LIBRARIES) -> list[tuple[str, int]]:
    """The normalised tokens of Python `source` with their lines: ``(symbol, line)``.

    Comments, layout and docstrings (a string alone on its lines) are dropped;
    numbers become ``N``, strings ``S``; names become ``V`` unless they are
    keywords, builtins, `libraries` or names imported in `source`, attributes
    (after a dot) or keyword arguments (``name=`` inside brackets).
    """
    from pygments.token import Comment, Literal, Name, Number, String

    raw = [(i, t, v) for i, t, v in _lexer().get_tokens_unprocessed(source) if v.strip()]
    starts = [0] + [i + 1 for i, ch in enumerate(source) if ch == "\n"]

    def line_of(index: int) -> int:
        return bisect.bisect_right(starts, index)

    imported = {v for _, t, v in raw if t in Name.Namespace}
    out: list[tuple[str, int]] = []
    depth, n = 0, len(raw)
    i = 0
    while i < n:
        index, kind, value = raw[i]
        line = line_of(index)
        if kind in Comment:
            i += 1
            continue
        if kind in String or kind in Literal.String:
            j = i
            while j < n and (raw[j][1] in String or (raw[j][1] in Name and raw[j - 1][1] in String.Interpol)):
                j += 1  # one string: its pieces, implicit concatenation, and names inside f-string braces
            # (a docstring, or a string statement: alone on its lines, not inside brackets or after an operator)
            alone_before = not out or (out[-1][1] < line and out[-1][0] not in "([{,=+")
            alone_after = j >= n or line_of(raw[j][0]) > line_of(raw[j - 1][0])
            if not (kind in String.Doc or (alone_before and alone_after)):
                out.append(("S", line))
            i = j
            continue
        if kind in Number:
            out.append(("N", line))
        elif kind in Name and kind not in Name.Builtin and kind not in Name.Namespace:
            after_dot = i > 0 and raw[i - 1][2] == "."
            keyword_arg = depth > 0 and i + 1 < n and raw[i + 1][2] == "="
            literal = after_dot or keyword_arg or value in libraries or value in imported
            out.append((value if literal else "V", line))
        else:  # keywords, operators, punctuation, builtins, module names: as written
            depth += (value in "([{") - (value in ")]}") if len(value) == 1 else 0
            out.append((value, line))
        i += 1
    return out


def runs(symbols: tuple[int, ...], k: int = K) -> list[int]:
    """The hash of every run of `k` tokens, by the position of its first token."""
    return [hash(symbols[p:p + k]) for p in range(len(symbols) - k + 1)]  # (a tuple of ints hashes alike in every run)


def fingerprints(symbols: tuple[int, ...], k: int = K, window: int = WINDOW) -> list[tuple[int, int]]:
    """The winnowed fingerprints of a token sequence: ``(hash, position of the run's first token)``.

    Every run of `k` tokens is hashed; of each `window` consecutive hashes the
    smallest is kept (the rightmost on ties), each kept position once. A
    sequence shorter than `k` has none.
    """
    hashes = runs(symbols, k)
    if not hashes:
        return []
    kept: dict[int, int] = {}
    for start in range(max(1, len(hashes) - window + 1)):
        chunk = hashes[start:start + window]
        low = min(chunk)
        pos = start + max(p for p, h in enumerate(chunk) if h == low)
        kept[pos] = low
    return [(h, p) for p, h in sorted(kept.items())]


def _given_lines(released_source: str) -> set[str]:
    return {line.strip() for line in released_source.splitlines() if line.strip()}


def make_answers(author: str, kind: str, cells: list[tuple[str, str]], given: dict[str, set[str]] | None = None,
                 libraries: frozenset[str] = LIBRARIES) -> Answers:
    """`author`'s cells ``(label, source)`` tokenised and fingerprinted; the lines of ``given[label]`` (the code the
    released notebook has in that cell) are left out, keeping the line numbers."""
    given = given or {}
    made = Answers(author, kind, [])
    for label, source in cells:
        skip = given.get(label, set())
        kept = "\n".join("" if line.strip() in skip else line for line in source.splitlines())
        found = tokens(kept, libraries)
        if not found:
            continue
        cell = Cell(label, source, tuple(_symbol(s) for s, _ in found), tuple(line for _, line in found))
        index = len(made.cells)
        made.cells.append(cell)
        for p, h in enumerate(runs(cell.symbols)):
            made.grams.setdefault(h, []).append((index, p))
        made.prints.update(h for h, _ in fingerprints(cell.symbols))
    return made


# ---------------------------------------------------------------------------------------------------------------
# Reading an assignment's authors

def _libraries(released: nbformat.NotebookNode) -> frozenset[str]:
    """LIBRARIES and every name the released notebook's code imports (its given cells import the libraries)."""
    names = set(LIBRARIES)
    for cell in released.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return frozenset(names)


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
    libraries = _libraries(released)
    names = answer_names(assignment)
    authors = []
    for student, path in sorted(notebooks.items()):
        try:
            submitted, _ = read_submission(path)
            found = [(_grade_id(c), c.source) for c in submitted.cells
                     if c.cell_type == "code" and _grade_id(c) in given]
            if sorted(g for g, _ in found) != sorted(given):  # (rebuilding costs: only where an answer is not found once)
                rebuilt, _ = rebuild(submitted, released, names)
                found = _answer_cells(rebuilt)
            made = make_answers(student, "student", found, given, libraries)
        except Unreadable:
            continue
        except Exception as error:  # (one odd notebook is left out, never the whole class's report)
            log.warning("similarity: %s's %s left out: %s: %s", student, assignment, type(error).__name__, error)
            continue
        if made.cells:
            authors.append(made)
    if not authors:
        return []  # (no answer to compare: the reference and the book are not read)
    reference = [(label, solution_code(source)) for label, source in _answer_cells(source_notebook(assignment))]
    authors.append(make_answers(REFERENCE, REFERENCE, reference, given, libraries))
    page = REPO / "book" / f"{assignment}.md"
    if page.is_file():
        import jupytext

        book = jupytext.read(page)
        cells = [(f"book cell {n}", c.source) for n, c in enumerate((c for c in book.cells if c.cell_type == "code"), 1)]
        made = make_answers(BOOK, BOOK, cells, {}, libraries)
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
        lines_a = {a.cells[ca].lines[p] for p in tokens_a}
        lines_b = {b.cells[cb].lines[p] for p in covered_b[cb]}
        matches.append(Match(a.cells[ca].label, b.cells[cb].label, a.cells[ca].source, b.cells[cb].source,
                             lines_a, lines_b))
    tokens = min(sum(map(len, covered_a.values())), sum(map(len, covered_b.values())))
    return Pair(assignment, a.author, b.author, b.kind, max(shares), shares[0], shares[1], tokens, matches)


def compare(assignment: str, authors: list[Answers], threshold: float = 0.7, min_tokens: int = 40) -> list[Pair]:
    """The pairs of `authors` (students with each other, each student with the reference and the book) whose
    similarity is at least `threshold` with at least `min_tokens` tokens in shared runs, highest first.

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
    pairs = []
    for start in range(0, n, BLOCK):  # (rows of students a block at a time: memory grows with the class, not its square)
        stop = min(n, start + BLOCK)
        shared = (weighted[start:stop] @ every.T).toarray()  # [i, j]: the weight of the fingerprints i and j share
        # [i, j]: i's share found in j, and j's found in i (the product is symmetric); a share is at most all (the
        # sums of weights in another order differ in the last bits)
        mine = np.minimum(shared / safe[start:stop, None], 1.0)
        theirs = np.minimum(shared / safe[None, :], 1.0)
        for row, j in zip(*np.nonzero(np.maximum(mine, theirs) >= threshold)):
            i = start + int(row)
            if j > i:  # (each pair of students once; the reference and the book come after them)
                a, b = everyone[i], everyone[j]
                pair = _pair(assignment, a, b, a.grams.keys() & b.grams.keys(),
                             (float(mine[row, j]), float(theirs[row, j])))
                if pair.tokens >= min_tokens:
                    pairs.append(pair)
    return sorted(pairs, key=lambda p: (-p.similarity, -p.tokens, p.a, p.b))


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
        pairs = compare(assignment, authors, settings.threshold, settings.min_tokens)
        # (Student ids are the export's text: none may start a spreadsheet formula.)
        rows += [[p.assignment, spreadsheet_cell(p.a), spreadsheet_cell(p.b), p.kind, f"{p.similarity:.3f}", p.tokens,
                  spreadsheet_cell(p.cells)] for p in pairs]
        sections.append({
            "assignment": assignment, "students": students, "compared": students * (students - 1) // 2,
            "flagged": len(pairs), "shown": len(pairs[:SHOWN_PAIRS]),
            "pairs": [{"a": p.a, "b": p.b, "kind": p.kind, "similarity": p.similarity, "share_a": p.share_a,
                       "share_b": p.share_b, "tokens": p.tokens, "cells": p.cells,
                       "matches": [{"label_a": m.label_a, "label_b": m.label_b, "a": _side(m.source_a, m.lines_a),
                                    "b": _side(m.source_b, m.lines_b)} for m in p.matches]}
                      for p in pairs[:SHOWN_PAIRS]],
        })
    with open(out / CSV, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["assignment", "student_a", "student_b", "kind", "similarity", "matched_tokens",
                         "matched_cells"])
        writer.writerows(rows)
    seconds = time.perf_counter() - started
    (out / HTML).write_text(render("similarity.html.j2", sections=sections, threshold=settings.threshold,
                                   min_tokens=settings.min_tokens, k=K,
                                   guaranteed=K + WINDOW - 1, seconds=seconds), encoding="utf-8")
    # (`out` is the run's fresh folder, swapped in for the output folder at the end: its name is not the one to show.)
    log.info("similarity: %d pair(s) at or above %.0f%%, listed in %s (%.1f s)", len(rows), 100 * settings.threshold,
             HTML, seconds)
    return {"pairs": len(rows), "threshold": settings.threshold, "file": HTML}
