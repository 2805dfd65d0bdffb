"""Python code as the similarity report compares it: the tokens that remain once what a copier can change without
changing the answer is taken out.

On the syntax tree (:mod:`ast`), each cell's code is normalised:

- a module is written by its name, however it was imported or renamed: ``import numpy as xp; xp.exp`` and
  ``from numpy import exp; exp`` are ``numpy.exp``; imports themselves are left out;
- every name the author binds is ``V`` (builtin names too: ``input = ...`` is a variable), builtins called as
  builtins, attributes and keyword arguments stay as written; numbers are ``N``, strings ``S``;
- docstrings, bare expressions, ``pass``, ``print(...)`` calls, type annotations, ``if False:`` blocks, code after a
  ``return`` and assignments never read are dropped, a list built by a loop of ``append`` is the comprehension it
  stands for, and a variable read once is replaced by its value (:mod:`.code_rewrite`, given what the rest of the
  notebook reads: the :class:`Context`);
- in each block, statements that neither read nor change what the other changes are put in one canonical order
  (the smallest first of those whose predecessors are placed), so swapping independent lines changes nothing.

Each token keeps the lines ``(first, last)`` of the statement (or compound statement's header) it comes from. Code
that does not parse is tokenised with Pygments instead, names abstracted as above without the tree's knowledge.
"""
from __future__ import annotations

import ast
import bisect
import builtins
import copy
import functools
import io
import tokenize
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from .code_rewrite import (
    blocks_of,
    changed_names,
    drop_dead,
    header_lines,
    inline,
    mark_given,
    module_path,
    names_in,
    own_name,
    simplify,
    walk,
)

__all__ = ["MODULES", "Context", "contexts", "imported_modules", "tokens"]

# The names the course's notebooks give to libraries: what they stand for where no import is seen.
MODULES = {"np": "numpy", "numpy": "numpy", "torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional",
           "math": "math", "plt": "matplotlib.pyplot", "scipy": "scipy"}
BUILTINS = frozenset(dir(builtins))
Token = tuple[str, tuple[int, int]]  # (symbol, (first line, last line))


@dataclass(frozen=True)
class Context:
    """What a cell's normalisation knows of its notebook.

    aliases: name -> the module (or module attribute) it stands for, ``{"xp": "numpy", "exp": "numpy.exp"}``.
    kept: the names read outside the cell (other cells, the tests): assigning them is never dead code. None: every
    top-level assignment is kept (nothing is known of the rest of the notebook).
    """

    aliases: Mapping[str, str]
    kept: frozenset[str] | None = None


def imported_modules(trees: list[ast.AST | None], known: Mapping[str, str] = MODULES) -> dict[str, str]:
    """The modules the parsed cells `trees` bind to names, over `known`: ``import a.b as x`` (x -> a.b),
    ``import a.b`` (a -> a), ``from a import f as g`` (g -> a.f) and ``x = <a module's name>`` (x -> that module).
    A cell that did not parse (None) binds nothing."""
    found = dict(known)
    for tree in trees:
        _bind_modules(_module_bindings(tree), found)
    return found


def _module_bindings(tree: ast.AST | None) -> list[tuple[str, str | ast.expr]]:
    """What `tree` may bind to a module, in order: ``(name, module path)`` for imports, ``(name, expression)`` for
    ``name = <expression that may be a module>``."""
    found: list[tuple[str, str | ast.expr]] = []
    for node in walk(tree) if tree is not None else ():
        if isinstance(node, ast.Import):
            found += [(a.asname or a.name.split(".")[0], a.name if a.asname else a.name.split(".")[0])
                      for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [(a.asname or a.name, f"{node.module}.{a.name}") for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, (ast.Name, ast.Attribute)):
            found.append((node.targets[0].id, node.value))
    return found


def _bind_modules(bindings: list[tuple[str, str | ast.expr]], found: dict[str, str]) -> None:
    for name, what in bindings:
        path = what if isinstance(what, str) else module_path(what, found)
        if path:
            found[name] = path


@functools.lru_cache(maxsize=4096)
def _cell_facts(source: str) -> tuple[frozenset[str], tuple]:
    """The names a cell reads without binding them (those another cell may give it), and its module bindings.
    (Cached: the cells the notebook gives, tests included, are the same text in every student's notebook.)"""
    tree = _parse(source)
    if tree is None:
        return frozenset(), ()
    read = {n.id for n in names_in(tree) if isinstance(n.ctx, ast.Load)}
    survey = _Survey(tree)
    return frozenset(read - survey.bound), tuple(survey.bindings)


def contexts(sources: list[str], cells: list[tuple[str, str]], also_kept: frozenset[str] = frozenset()
             ) -> dict[str, Context]:
    """The context of each of `cells` (``(label, source)``, usually among `sources`) in a notebook whose code cells
    are `sources`: the modules they import (over :data:`MODULES`), and the names read outside the cell (read
    by another of `sources` without binding them there, or among `also_kept`: the tests')."""
    facts = [_cell_facts(source) for source in sources]
    aliases = dict(MODULES)
    for _, bindings in facts:
        _bind_modules(bindings, aliases)
    reads = Counter(n for free, _ in facts for n in free)
    out = {}
    for label, source in cells:
        mine = _cell_facts(source)[0] if source in sources else frozenset()  # (counted in `reads` once)
        out[label] = Context(aliases, frozenset(n for n, count in reads.items() if count - (n in mine) > 0) | also_kept)
    return out


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def tokens(source: str, context: Context | None = None, given: set[str] = frozenset()) -> list[Token]:
    """The normalised tokens of Python `source`, each with its lines: ``(symbol, (first, last))``.

    `given` are lines (stripped) the released notebook already has in the cell: statements (or compound statements'
    headers) made of them alone are left out. `context` (default: the course's usual module names, every top-level
    assignment kept) says what the rest of the notebook imports and reads.
    """
    context = context or Context(MODULES)
    tree = _parse(source)
    if tree is not None:
        try:
            return _tree_tokens(tree, source, context, given)
        except RecursionError:  # (code nested deeper than the tree's passes go: read as text)
            pass
    return _pygments_tokens(source, context.aliases, given)


def _tree_tokens(tree: ast.Module, source: str, context: Context, given: set[str]) -> list[Token]:
    mark_given(tree.body, source.splitlines(), given)
    survey = _Survey(tree)
    known = dict(context.aliases)
    _bind_modules(survey.bindings, known)
    aliases = {n: p for n, p in known.items() if n not in survey.bound or survey.alias_only(n, known)}
    body = simplify(tree.body, aliases)
    drop_dead(body, context.kept, tree, survey.declared)
    inline(body, context.kept)
    for node in survey.functions:  # (a function's locals: nothing else reads them)
        drop_dead(node.body, frozenset(), node, survey.declared)
        inline(node.body, frozenset())
    _abstract(body, aliases, survey.bound)
    return [t for stmt in _ordered(body) for t in stmt[1]]


class _Survey:
    """What one walk of a cell's tree finds: the names it binds (assigned, parameters, functions and classes,
    loop and comprehension targets, ``except ... as``, ``global``, imports), what it may bind to modules, its
    functions, and its ``global`` and ``nonlocal`` names."""

    def __init__(self, tree: ast.AST):
        self.bound: set[str] = set()
        self.stores: Counter = Counter()  # name -> bindings that are no import
        self.bindings = _module_bindings(tree)
        self.functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.declared: set[str] = set()
        for node in walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                self.stores[node.id] += 1
            elif isinstance(node, ast.arg):
                self.stores[node.arg] += 1
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.stores[node.name] += 1
                if not isinstance(node, ast.ClassDef):
                    self.functions.append(node)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                self.stores[node.name] += 1
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                self.declared.update(node.names)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self.bound.update(a.asname or a.name.split(".")[0] for a in node.names)
        self.bound |= set(self.stores) | self.declared

    def alias_only(self, name: str, aliases: Mapping[str, str]) -> bool:
        """Whether every binding of `name` is an import or ``name = <module>`` (an alias, not a variable)."""
        as_module = sum(1 for n, what in self.bindings if n == name and not isinstance(what, str)
                        and module_path(what, aliases))
        return self.stores[name] == as_module


# ---------------------------------------------------------------------------------------------------------------
# Names, constants, and the tokens in canonical order

class _Symbol:
    """A constant's value once abstracted: ast.unparse writes it as its text (``N``, ``S``)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


_N, _S = _Symbol("N"), _Symbol("S")


def _abstract(body: list[ast.stmt], aliases: Mapping[str, str], bound: set[str]) -> None:
    """In place: names bound in the cell (and unknown ones) -> ``V``, modules -> their path, numbers -> ``N``,
    strings -> ``S``; each renamed name keeps its own as ``_name`` (the order of statements depends on it)."""
    stack: list[ast.AST] = list(body)
    while stack:
        n = stack.pop()
        kind = type(n)
        if kind is ast.Name:
            n._name = n.id
            n.id = aliases[n.id] if n.id in aliases else \
                n.id if n.id in BUILTINS and n.id not in bound else "V"
            continue
        if kind is ast.Constant:
            if isinstance(n.value, (str, bytes)):
                n.value = _S
            elif isinstance(n.value, (int, float, complex)) and not isinstance(n.value, bool):
                n.value = _N
            continue
        if kind is ast.arg:
            n.arg = "V"
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            n.name = "V"
        elif kind is ast.ExceptHandler and n.name:
            n.name = "V"
        elif kind in (ast.Global, ast.Nonlocal):
            n.names = ["V"] * len(n.names)
        for f in n._fields:
            v = getattr(n, f, None)
            if type(v) is list:
                for k, x in enumerate(v):
                    if type(x) is ast.JoinedStr:
                        v[k] = ast.Constant(value=_S)  # (an f-string is a string)
                    elif isinstance(x, ast.AST):
                        stack.append(x)
            elif type(v) is ast.JoinedStr:
                setattr(n, f, ast.Constant(value=_S))
            elif isinstance(v, ast.AST):
                stack.append(v)


_LAYOUT = {tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER, tokenize.COMMENT}


@functools.lru_cache(maxsize=1 << 16)
def _symbols(text: str) -> tuple[str, ...]:
    # (cached: once normalised, many students' statements are the same text)
    return tuple(t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in _LAYOUT)


def _header(stmt: ast.stmt) -> list[str]:
    """The tokens of a compound statement's header (``for V in V :``), or of a simple statement."""
    if not blocks_of(stmt) and not hasattr(stmt, "handlers"):
        return _symbols(ast.unparse(stmt))
    shell = copy.copy(stmt)
    for f in blocks_of(stmt):
        setattr(shell, f, [])
    shell.body = [ast.Pass()]
    if hasattr(shell, "handlers"):
        return ["try", ":"]
    if isinstance(shell, ast.Match):
        return _symbols(ast.unparse(stmt))  # (rare in the course: the whole statement)
    found = _symbols(ast.unparse(shell))
    return found[:-1] if found and found[-1] == "pass" else found


def _ordered(body: list[ast.stmt]) -> list[tuple[ast.stmt, list[Token]]]:
    """Each statement of `body` with its tokens (its blocks' included), the statements in canonical order: of those
    whose earlier dependencies are placed, the one with the smallest tokens first (ties: as written)."""
    emitted = [(stmt, _emit(stmt)) for stmt in body]
    n = len(emitted)
    if n < 2:
        return emitted
    changed = [changed_names(s) for s in body]
    named = [{own_name(x) for x in names_in(s)} for s in body]
    fixed = (ast.Return, ast.Raise, ast.Continue, ast.Break, ast.Global, ast.Nonlocal, ast.Expr, ast.Try, ast.With)
    after: list[set[int]] = [set() for _ in range(n)]
    for b in range(n):
        for a in range(b):
            if isinstance(body[a], fixed) or isinstance(body[b], fixed) or changed[a] & named[b] \
                    or changed[b] & named[a]:
                after[b].add(a)
    key = [tuple(s for s, _ in tokens_) for _, tokens_ in emitted]
    placed: list[int] = []
    done: set[int] = set()
    while len(placed) < n:
        ready = [i for i in range(n) if i not in done and after[i] <= done]
        pick = min(ready, key=lambda i: (key[i], i))
        placed.append(pick)
        done.add(pick)
    return [emitted[i] for i in placed]


def _emit(stmt: ast.stmt) -> list[Token]:
    lines = header_lines(stmt)
    span = (lines[0], lines[-1]) if blocks_of(stmt) else (stmt.lineno, stmt.end_lineno)
    out = [] if getattr(stmt, "_given", False) else [(s, span) for s in _header(stmt)]
    if hasattr(stmt, "handlers"):  # (try, and try with except*)
        out += [t for _, ts in _ordered(stmt.body) for t in ts]
        for handler in stmt.handlers:
            head = ["except", *(_symbols(ast.unparse(handler.type)) if handler.type else ())] + \
                (["as", "V"] if handler.name else []) + [":"]
            out += [(s, (handler.lineno, handler.lineno)) for s in head]
            out += [t for _, ts in _ordered(handler.body) for t in ts]
        blocks = [("else", stmt.orelse), ("finally", stmt.finalbody)]
    else:
        out += [t for _, ts in _ordered(stmt.body) for t in ts] if blocks_of(stmt) else []
        blocks = [("else", getattr(stmt, "orelse", []) or [])]
    for word, block in blocks:
        if block:
            out += [(word, span), (":", span)] + [t for _, ts in _ordered(block) for t in ts]
    return out


# ---------------------------------------------------------------------------------------------------------------
# Code that does not parse

@functools.cache
def _lexer():
    from pygments.lexers import PythonLexer

    return PythonLexer()


def _pygments_tokens(source: str, aliases: Mapping[str, str], given: set[str]) -> list[Token]:
    """Tokens of code that does not parse: Pygments reads it anyway. Comments, layout and docstrings (a string alone
    on its lines) go; numbers are ``N``, strings ``S``; names ``V`` unless keywords, builtins, attributes, keyword
    arguments or modules (written as the module's name); given lines are left out."""
    from pygments.token import Comment, Literal, Name, Number, String

    source = "\n".join("" if line.strip() in given else line for line in source.splitlines())
    raw = [(i, t, v) for i, t, v in _lexer().get_tokens_unprocessed(source) if v.strip()]
    starts = [0] + [i + 1 for i, ch in enumerate(source) if ch == "\n"]

    def line_of(index: int) -> int:
        return bisect.bisect_right(starts, index)

    out: list[Token] = []
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
            alone_before = not out or (out[-1][1][0] < line and out[-1][0] not in "([{,=+")
            alone_after = j >= n or line_of(raw[j][0]) > line_of(raw[j - 1][0])
            if not (kind in String.Doc or (alone_before and alone_after)):
                out.append(("S", (line, line)))
            i = j
            continue
        after_dot = i > 0 and raw[i - 1][2] == "."
        if kind in Number:
            out.append(("N", (line, line)))
        elif kind in Name and not after_dot and value in aliases:
            out += [(s, (line, line)) for s in _symbols(aliases[value])]
        elif kind in Name and kind not in Name.Builtin and kind not in Name.Namespace:
            keyword_arg = depth > 0 and i + 1 < n and raw[i + 1][2] == "="
            out.append((value if after_dot or keyword_arg else "V", (line, line)))
        else:  # keywords, operators, punctuation, builtins: as written
            depth += (value in "([{") - (value in ")]}") if len(value) == 1 else 0
            out.append((value, (line, line)))
        i += 1
    return out
