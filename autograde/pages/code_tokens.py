"""Python code as the similarity report compares it: the tokens that remain once what a copier can change without
changing the answer is taken out.

On the syntax tree (:mod:`ast`), each cell's code is normalised:

- a module is written by its name, however it was imported or renamed: ``import numpy as xp; xp.exp`` and
  ``from numpy import exp; exp`` are ``numpy.exp``; imports themselves are left out;
- every name the author binds is ``V`` (builtin names too: ``input = ...`` is a variable), builtins called as
  builtins, attributes and keyword arguments stay as written; numbers are ``N``, strings ``S``;
- docstrings, bare expressions, ``pass``, ``print(...)`` calls, type annotations, ``if False:`` blocks, code after a
  ``return`` and assignments never read are dropped (at a cell's top level only when the notebook's other cells and
  the tests read no such name);
- a list built by a loop of ``append`` is the comprehension it stands for, and a variable read once just after it
  is assigned is replaced by its value;
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
    for node in _walk(tree) if tree is not None else ():
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
        path = what if isinstance(what, str) else _module_path(what, found)
        if path:
            found[name] = path


@functools.lru_cache(maxsize=4096)
def _cell_facts(source: str) -> tuple[frozenset[str], tuple]:
    """The names a cell reads without binding them (those another cell may give it), and its module bindings.
    (Cached: the cells the notebook gives, tests included, are the same text in every student's notebook.)"""
    tree = _parse(source)
    if tree is None:
        return frozenset(), ()
    read = {n.id for n in _names(tree) if isinstance(n.ctx, ast.Load)}
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


def _walk(node: ast.AST):
    """Every node of `node`'s tree, as :func:`ast.walk` (in another order), without the contexts: twice as fast."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        for f in n._fields:
            v = getattr(n, f, None)
            if type(v) is list:
                stack.extend(x for x in v if isinstance(x, ast.AST) and not isinstance(x, ast.expr_context))
            elif isinstance(v, ast.AST) and not isinstance(v, ast.expr_context):
                stack.append(v)


def _names(node: ast.AST) -> list[ast.Name]:
    """Every name in `node`'s tree (walking the trees is most of the normalisation's cost: this walk is five
    times as fast as ast.walk)."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if type(n) is ast.Name:
            out.append(n)
            continue
        for f in n._fields:
            v = getattr(n, f, None)
            if type(v) is list:
                stack.extend(x for x in v if isinstance(x, ast.AST))
            elif isinstance(v, ast.AST):
                stack.append(v)
    return out


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _module_path(node: ast.expr, aliases: Mapping[str, str]) -> str | None:
    """``xp.linalg`` -> ``numpy.linalg`` when ``xp`` is numpy; None when `node` is no module's attribute chain."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _module_path(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    return None


def tokens(source: str, context: Context | None = None, given: set[str] = frozenset()) -> list[Token]:
    """The normalised tokens of Python `source`, each with its lines: ``(symbol, (first, last))``.

    `given` are lines (stripped) the released notebook already has in the cell: statements (or compound statements'
    headers) made of them alone are left out. `context` (default: the course's usual module names, every top-level
    assignment kept) says what the rest of the notebook imports and reads.
    """
    context = context or Context(MODULES)
    tree = _parse(source)
    if tree is None:
        return _pygments_tokens(source, context.aliases, given)
    _mark_given(tree.body, source.splitlines(), given)
    survey = _Survey(tree)
    known = dict(context.aliases)
    _bind_modules(survey.bindings, known)
    aliases = {n: p for n, p in known.items() if n not in survey.bound or survey.alias_only(n, known)}
    body = _simplify(tree.body, aliases)
    _drop_dead(body, context.kept, tree, survey.declared)
    _inline(body, context.kept)
    for node in survey.functions:  # (a function's locals: nothing else reads them)
        _drop_dead(node.body, frozenset(), node, survey.declared)
        _inline(node.body, frozenset())
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
        for node in _walk(tree):
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
                        and _module_path(what, aliases))
        return self.stores[name] == as_module


# ---------------------------------------------------------------------------------------------------------------
# Statement-level normalisation

def _blocks(node: ast.AST) -> list[str]:
    return [f for f in ("body", "orelse", "finalbody") if isinstance(getattr(node, f, None), list)]


def _header_lines(stmt: ast.stmt) -> range:
    """The lines of a statement, or of a compound statement's header (to its first inner statement)."""
    inner = [s for f in _blocks(stmt) for s in getattr(stmt, f)]
    last = min(s.lineno for s in inner) - 1 if inner else stmt.end_lineno
    return range(stmt.lineno, max(stmt.lineno, last) + 1)


def _mark_given(body: list[ast.stmt], lines: list[str], given: set[str]) -> None:
    """Mark (``_given``) the statements whose own lines are all given code."""
    for stmt in body:
        own = [lines[n - 1].strip() for n in _header_lines(stmt) if n - 1 < len(lines)]
        own = [line for line in own if line and not line.startswith("#")]
        stmt._given = bool(given) and bool(own) and all(line in given for line in own)
        for f in _blocks(stmt):
            _mark_given(getattr(stmt, f), lines, given)
        for handler in getattr(stmt, "handlers", []):
            _mark_given(handler.body, lines, given)


def _constant(node: ast.expr) -> object:
    """The value of a constant condition (``False``, ``0``, ``not True``); `_constant` itself where it is none."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        value = _constant(node.operand)
        return _constant if value is _constant else not value
    return _constant


def _is_noise(stmt: ast.stmt, aliases: Mapping[str, str]) -> bool:
    """Statements that do nothing to the answer: imports, module aliases, ``pass``, a lone value, ``print(...)``."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Pass)):
        return True
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and _module_path(stmt.value, aliases):
        return True
    if isinstance(stmt, ast.Expr):
        value = stmt.value
        if isinstance(value, (ast.Constant, ast.Name, ast.Attribute, ast.JoinedStr)):
            return True
        return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "print"
    return False


def _simplify(body: list[ast.stmt], aliases: Mapping[str, str]) -> list[ast.stmt]:
    """`body` without noise, dead branches, code after a jump and annotations; appending loops as comprehensions."""
    out: list[ast.stmt] = []
    for stmt in body:
        if _is_noise(stmt, aliases):
            continue
        if isinstance(stmt, (ast.If, ast.While)) and _constant(stmt.test) is not _constant:
            if isinstance(stmt, ast.If):
                out += _simplify(stmt.body if _constant(stmt.test) else stmt.orelse, aliases)
            elif _constant(stmt.test):
                out.append(stmt)
            continue
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is None:
                continue
            given = getattr(stmt, "_given", False)
            stmt = ast.copy_location(ast.Assign(targets=[stmt.target], value=stmt.value), stmt)
            stmt._given = given
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stmt.returns = None
            for a in ast.walk(stmt.args):
                if isinstance(a, ast.arg):
                    a.annotation = None
        for f in _blocks(stmt):
            setattr(stmt, f, _simplify(getattr(stmt, f), aliases))
        for handler in getattr(stmt, "handlers", []):
            handler.body = _simplify(handler.body, aliases)
        if isinstance(stmt, ast.For) and _as_comprehension(out, stmt):
            continue
        out.append(stmt)
        if isinstance(stmt, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            break  # (what follows never runs)
    return out


def _as_comprehension(before: list[ast.stmt], loop: ast.For) -> bool:
    """``rows = []`` (earlier in `before`, untouched since) and `loop` appending to it become
    ``rows = [item for target in items (if test)]`` in place of the ``rows = []``; False where `loop` is not that."""
    if loop.orelse or len(loop.body) != 1:
        return False
    inner, test = loop.body[0], None
    if isinstance(inner, ast.If) and not inner.orelse and len(inner.body) == 1:
        inner, test = inner.body[0], inner.test
    call = inner.value if isinstance(inner, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append"
            and isinstance(call.func.value, ast.Name) and len(call.args) == 1 and not call.keywords):
        return False
    name = call.func.value.id
    for i in range(len(before) - 1, -1, -1):
        stmt = before[i]
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and stmt.targets[0].id == name:
            empty = (isinstance(stmt.value, ast.List) and not stmt.value.elts) or (
                isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name)
                and stmt.value.func.id == "list" and not stmt.value.args)
            if not empty:
                return False
            built = ast.ListComp(elt=call.args[0], generators=[
                ast.comprehension(target=loop.target, iter=loop.iter, ifs=[test] if test else [], is_async=0)])
            stmt.value = built
            stmt.end_lineno = loop.end_lineno
            before.append(before.pop(i))  # (it stands where the loop stood)
            return True
        if any(n.id == name for n in _names(stmt)):
            return False
    return False


def _loaded(nodes) -> Counter:
    return Counter(n.id for node in nodes for n in _names(node) if isinstance(n.ctx, ast.Load))


def _targets_names(stmt: ast.stmt) -> list[str] | None:
    """The names an assignment binds, where it binds nothing but names (else None)."""
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.AugAssign):
        targets = [stmt.target]
    else:
        return None
    names = []
    for target in targets:
        for node in _walk(target):
            if isinstance(node, ast.Name):
                names.append(node.id)
            elif not isinstance(node, (ast.Tuple, ast.List, ast.Starred)):
                return None
    return names


def _drop_dead(body: list[ast.stmt], kept: frozenset[str] | None, scope: ast.AST, declared: set[str]) -> None:
    """Remove from `body` (and its blocks) the assignments to names that nothing in `scope` reads (kept ones and
    `declared` ones, ``global`` or ``nonlocal``, aside; None for `kept` at a cell's top level: nothing is known,
    nothing is removed)."""
    if kept is None and isinstance(scope, ast.Module):
        return
    changed = True
    while changed:
        live = set(_loaded([scope] if not isinstance(scope, ast.Module) else body)) | declared | (kept or set())
        changed = _drop_in(body, lambda names, live=live: not live.intersection(names))


def _drop_in(body: list[ast.stmt], dead) -> bool:
    dropped = False
    for stmt in list(body):
        names = _targets_names(stmt)
        if names is not None and dead(names):
            body.remove(stmt)
            dropped = True
            continue
        for f in _blocks(stmt):
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                dropped |= _drop_in(getattr(stmt, f), dead)
    return dropped


class _Replace(ast.NodeTransformer):
    def __init__(self, name: str, value: ast.expr):
        self.name, self.value = name, value

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.value if node.id == self.name and isinstance(node.ctx, ast.Load) else node


def _inline(body: list[ast.stmt], kept: frozenset[str] | None) -> None:
    """Replace each variable that one later simple statement of `body` reads once, and nothing else, by its value
    (``rows = [...]; w = np.array(rows)`` is ``w = np.array([...])``), where nothing between changes what it reads."""
    simple = (ast.Assign, ast.AugAssign, ast.Return, ast.Expr)
    loads = [_loaded([s]) for s in body]  # (per statement, counted once: walking the trees is the cost here)
    i = 0
    while i < len(body):
        stmt = body[i]
        names = _targets_names(stmt)
        if not (isinstance(stmt, ast.Assign) and names and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            i += 1
            continue
        name, value = names[0], stmt.value
        # (the reads this assignment reaches: up to the next statement that binds the name again, that one's own
        # value included; a block of a function's or a cell's top level runs once, in order)
        rebound = next((k for k in range(i + 1, len(body)) if name in _binds(body[k])), None)
        reach = range(i + 1, len(body) if rebound is None else rebound + 1)
        j = next((j for j in reach if loads[j][name]), None)
        if j is None or sum(loads[k][name] for k in reach) != 1 or not isinstance(body[j], simple):
            i += 1
            continue
        protected = (kept is None or name in kept) and rebound is None  # (read elsewhere, or nothing known)
        needed = {n.id for n in _names(value)} | {name}
        if protected or any(_changed(s) & needed for s in body[i + 1:j]):
            i += 1
            continue
        body[j] = _Replace(name, value).visit(body[j])
        loads[j] = loads[j] - Counter({name: 1}) + loads[i]
        del body[i], loads[i]


def _binds(stmt: ast.stmt) -> set[str]:
    """The names `stmt` assigns (anywhere in it)."""
    return {n.id for n in _names(stmt) if isinstance(n.ctx, ast.Store)}


def _own(name: ast.Name) -> str:
    return getattr(name, "_name", name.id)  # (the name as written, once abstracted to V)


def _changed(stmt: ast.stmt) -> set[str]:
    """The names `stmt` may change: those it binds, the objects it assigns into, and all it names in a call alone."""
    if isinstance(stmt, ast.Expr):
        return {_own(n) for n in _names(stmt)}
    changed = set()
    for node in _walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            changed.add(_own(node))
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            base = node.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                changed.add(_own(base))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            changed.add(node.name)
    return changed


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
    if not _blocks(stmt) and not hasattr(stmt, "handlers"):
        return _symbols(ast.unparse(stmt))
    shell = copy.copy(stmt)
    for f in _blocks(stmt):
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
    changed = [_changed(s) for s in body]
    named = [{_own(x) for x in _names(s)} for s in body]
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
    lines = _header_lines(stmt)
    span = (lines[0], lines[-1]) if _blocks(stmt) else (stmt.lineno, stmt.end_lineno)
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
        out += [t for _, ts in _ordered(stmt.body) for t in ts] if _blocks(stmt) else []
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
