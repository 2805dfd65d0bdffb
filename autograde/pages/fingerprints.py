"""Fingerprints of answers for the similarity report: each cell's normalised tokens (:mod:`.code_tokens`), the
hash of every run of :data:`K` of them, and the runs winnowing keeps (Schleimer, Wilkerson and Aiken 2003, the
method of MOSS and copydetect).

Every run of K tokens is hashed; in each window of :data:`WINDOW` consecutive hashes the smallest is kept (a shared
run of ``K + WINDOW - 1`` tokens is always found). Runs never cross a cell's end, and an author's fingerprints are
a set: cells in another order, or an answer moved into another cell, still match.
"""
from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from .code_tokens import Context, tokens

__all__ = ["BOOK", "K", "REFERENCE", "STUDENT", "WINDOW", "Answers", "Cell", "fingerprints", "make_answers", "runs"]

K = 8  # tokens per fingerprinted run: shorter shared runs are noise (``return V @ V . T`` is 6)
WINDOW = 4  # hashes per winnowing window: every shared run of K + WINDOW - 1 = 11 tokens is found
STUDENT, REFERENCE, BOOK = "student", "reference", "book"  # the kinds of authors (the CSV's kind column)


@dataclass(frozen=True)
class Cell:
    """One cell of code: its label (grade id, or ``book cell N``), its source, its tokens and each token's lines."""

    label: str
    source: str
    symbols: tuple[int, ...]  # the normalised tokens, each as a stable 32-bit number
    lines: tuple[tuple[int, int], ...]  # the lines (first, last; from 1) of each token's statement in `source`


@dataclass
class Answers:
    """One author's code for one assignment (a student's answer cells, the reference's, or the book's cells)."""

    author: str
    kind: str  # STUDENT, REFERENCE or BOOK
    cells: list[Cell]
    # the hash of every run of K tokens -> where it starts: (index of the cell, index of the run's first token)
    grams: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    prints: set[int] = field(default_factory=set)  # the winnowed fingerprints: what the pairs are scored on


def _symbol(text: str) -> int:
    return zlib.crc32(text.encode())  # (stable across runs, unlike str's salted hash)


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


def make_answers(author: str, kind: str, cells: list[tuple[str, str]], given: dict[str, set[str]] | None = None,
                 contexts: Mapping[str, Context] | None = None) -> Answers:
    """`author`'s cells ``(label, source)`` tokenised and fingerprinted. The statements made of lines of
    ``given[label]`` (the code the released notebook has in that cell) are left out; ``contexts[label]`` is what
    the cell's normalisation knows of its notebook (default: the usual module names, every top-level assignment
    kept). A cell with no token left is no cell."""
    given, contexts = given or {}, contexts or {}
    made = Answers(author, kind, [])
    for label, source in cells:
        found = tokens(source, contexts.get(label), given.get(label, set()))
        if not found:
            continue
        cell = Cell(label, source, tuple(_symbol(s) for s, _ in found), tuple(lines for _, lines in found))
        index = len(made.cells)
        made.cells.append(cell)
        for p, h in enumerate(runs(cell.symbols)):
            made.grams.setdefault(h, []).append((index, p))
        made.prints.update(h for h, _ in fingerprints(cell.symbols))
    return made
