"""Which pairs of authors the similarity report lists (:mod:`.similarity` reads them and writes the page).

A fingerprint weighs ``log((students + 1) / students who have it)``: what the whole class writes weighs almost
nothing, what two students alone share weighs most. A side's share is the weight of the fingerprints it shares
over the weight of all of its own (a verbatim or disguised copy: 100%, however common its lines); a pair's
similarity is the larger share (:func:`compare`). A copied cell (:func:`copied_cells`) is found by the runs of a
cell that one other author alone has, whatever the pair's similarity.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from .fingerprints import BOOK, STUDENT, WINDOW, Answers, Cell, K, runs

__all__ = ["BLOCK", "CopiedCell", "Match", "Pair", "compare", "copied_cells"]

BLOCK = 512  # students whose pairs are scored at once


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
    kind: str  # what b is: STUDENT, REFERENCE or BOOK
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

    students = [s for s in authors if s.kind == STUDENT]
    others = [s for s in authors if s.kind != STUDENT]
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
    students = [x for x in authors if x.kind == STUDENT]
    holders: dict[int, list[int]] = defaultdict(list)
    for i, x in enumerate(students):
        for h in x.grams:
            if len(holders[h]) < 3:  # (a third holder is enough to know it is no pair's alone)
                holders[h].append(i)
    others = [x for x in authors if x.kind != STUDENT]
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
