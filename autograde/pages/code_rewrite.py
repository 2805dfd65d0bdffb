"""Statement-level normalisation of a cell's syntax tree for the similarity report (:mod:`.code_tokens` then
writes the tokens): what a copier can add, drop or rewrite without changing the answer is undone.

- imports, module aliases (``xp = np``), ``pass``, lone values, ``print(...)`` calls and annotations go;
- ``if False:`` blocks and code after a ``return`` go, and so do assignments nothing reads (at a cell's top level
  only when the rest of the notebook and the tests read no such name);
- a list built by a loop of ``append`` is the comprehension it stands for, and a variable whose value one later
  statement reads once is replaced by its value.

The passes change the tree in place; each statement keeps its first and last line.
"""
from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Mapping

__all__ = ["blocks_of", "changed_names", "drop_dead", "header_lines", "inline", "loaded", "mark_given", "module_path",
           "names_in", "own_name", "simplify", "walk"]


def walk(node: ast.AST):
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


def names_in(node: ast.AST) -> list[ast.Name]:
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


def module_path(node: ast.expr, aliases: Mapping[str, str]) -> str | None:
    """``xp.linalg`` -> ``numpy.linalg`` when ``xp`` is numpy; None when `node` is no module's attribute chain."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = module_path(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    return None


def blocks_of(node: ast.AST) -> list[str]:
    return [f for f in ("body", "orelse", "finalbody") if isinstance(getattr(node, f, None), list)]


def header_lines(stmt: ast.stmt) -> range:
    """The lines of a statement, or of a compound statement's header (to its first inner statement)."""
    inner = [s for f in blocks_of(stmt) for s in getattr(stmt, f)]
    last = min(s.lineno for s in inner) - 1 if inner else stmt.end_lineno
    return range(stmt.lineno, max(stmt.lineno, last) + 1)


def mark_given(body: list[ast.stmt], lines: list[str], given: set[str]) -> None:
    """Mark (``_given``) the statements whose own lines are all given code."""
    for stmt in body:
        own = [lines[n - 1].strip() for n in header_lines(stmt) if n - 1 < len(lines)]
        own = [line for line in own if line and not line.startswith("#")]
        stmt._given = bool(given) and bool(own) and all(line in given for line in own)
        for f in blocks_of(stmt):
            mark_given(getattr(stmt, f), lines, given)
        for handler in getattr(stmt, "handlers", []):
            mark_given(handler.body, lines, given)


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
            and stmt.targets[0].id in aliases and module_path(stmt.value, aliases):
        return True  # (``xp = np``: the name is an alias; ``r = np.pi`` and later ``r = 2 * r`` is a variable)
    if isinstance(stmt, ast.Expr):
        value = stmt.value
        if isinstance(value, (ast.Constant, ast.Name, ast.Attribute, ast.JoinedStr)):
            return True
        return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "print"
    return False


def simplify(body: list[ast.stmt], aliases: Mapping[str, str]) -> list[ast.stmt]:
    """`body` without noise, dead branches, code after a jump and annotations; appending loops as comprehensions."""
    out: list[ast.stmt] = []
    for stmt in body:
        if _is_noise(stmt, aliases):
            continue
        if isinstance(stmt, (ast.If, ast.While)) and _constant(stmt.test) is not _constant:
            if isinstance(stmt, ast.If):
                out += simplify(stmt.body if _constant(stmt.test) else stmt.orelse, aliases)
                continue
            if not _constant(stmt.test):
                continue  # (``while False:`` never runs; ``while True:`` is a loop like another)
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
        for f in blocks_of(stmt):
            setattr(stmt, f, simplify(getattr(stmt, f), aliases))
        for handler in getattr(stmt, "handlers", []):
            handler.body = simplify(handler.body, aliases)
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
        if any(n.id == name for n in names_in(stmt)):
            return False
    return False


def loaded(nodes) -> Counter:
    return Counter(n.id for node in nodes for n in names_in(node) if isinstance(n.ctx, ast.Load))


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
        for node in walk(target):
            if isinstance(node, ast.Name):
                names.append(node.id)
            elif not isinstance(node, (ast.Tuple, ast.List, ast.Starred)):
                return None
    return names


def drop_dead(body: list[ast.stmt], kept: frozenset[str] | None, scope: ast.AST, declared: set[str]) -> None:
    """Remove from `body` (and its blocks) the assignments to names that nothing in `scope` reads (kept ones and
    `declared` ones, ``global`` or ``nonlocal``, aside; None for `kept` at a cell's top level: nothing is known,
    nothing is removed)."""
    if kept is None and isinstance(scope, ast.Module):
        return
    changed = True
    while changed:
        live = set(loaded([scope] if not isinstance(scope, ast.Module) else body)) | declared | (kept or set())
        changed = _drop_in(body, lambda names, live=live: not live.intersection(names))


def _drop_in(body: list[ast.stmt], dead) -> bool:
    dropped = False
    for stmt in list(body):
        names = _targets_names(stmt)
        if names is not None and dead(names):
            body.remove(stmt)
            dropped = True
            continue
        for f in blocks_of(stmt):
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                dropped |= _drop_in(getattr(stmt, f), dead)
    return dropped


class _Replace(ast.NodeTransformer):
    def __init__(self, name: str, value: ast.expr):
        self.name, self.value = name, value

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.value if node.id == self.name and isinstance(node.ctx, ast.Load) else node


INLINED_NAMES = 40  # names at most in a statement that inlining makes


def inline(body: list[ast.stmt], kept: frozenset[str] | None) -> None:
    """Replace each variable that one later simple statement of `body` reads once, and nothing else, by its value
    (``rows = [...]; w = np.array(rows)`` is ``w = np.array([...])``), where nothing between changes what it reads."""
    simple = (ast.Assign, ast.AugAssign, ast.Return, ast.Expr)
    # (per statement, found once: walking the trees is the cost here, and a long cell has many statements)
    loads, binds, changes = [loaded([s]) for s in body], [_binds(s) for s in body], [changed_names(s) for s in body]
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
        rebound = next((k for k in range(i + 1, len(body)) if name in binds[k]), None)
        reach = range(i + 1, len(body) if rebound is None else rebound + 1)
        j = next((j for j in reach if loads[j][name]), None)
        if j is None or sum(loads[k][name] for k in reach) != 1 or not isinstance(body[j], simple):
            i += 1
            continue
        protected = (kept is None or name in kept) and rebound is None  # (read elsewhere, or nothing known)
        inner = names_in(value)
        needed = {n.id for n in inner} | {name}
        # (a long chain of such variables would nest one expression past what ast.unparse can recurse into)
        if protected or len(inner) + len(names_in(body[j])) > INLINED_NAMES \
                or any(c & needed for c in changes[i + 1:j]):
            i += 1
            continue
        body[j] = _Replace(name, value).visit(body[j])
        loads[j] = loads[j] - Counter({name: 1}) + loads[i]
        binds[j], changes[j] = _binds(body[j]), changed_names(body[j])
        del body[i], loads[i], binds[i], changes[i]


def _binds(stmt: ast.stmt) -> set[str]:
    """The names `stmt` assigns (anywhere in it)."""
    return {n.id for n in names_in(stmt) if isinstance(n.ctx, ast.Store)}


def own_name(name: ast.Name) -> str:
    return getattr(name, "_name", name.id)  # (the name as written, once abstracted to V)


def changed_names(stmt: ast.stmt) -> set[str]:
    """The names `stmt` may change: those it binds, the objects it assigns into, and all it names in a call alone."""
    if isinstance(stmt, ast.Expr):
        return {own_name(n) for n in names_in(stmt)}
    changed = set()
    for node in walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            changed.add(own_name(node))
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            base = node.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                changed.add(own_name(base))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            changed.add(node.name)
    return changed
