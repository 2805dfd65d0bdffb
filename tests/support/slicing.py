"""Which cells of a notebook a variant (a mutant, an alternative) can change, and which of them a fork must run.

Test scaffolding for tests/support/verdicts.py: the standard library and
IPython's input transformer only (the child process imports it before any
notebook code). A fork that evaluates a
variant used to run every cell after the first one the variant replaces; in the
training chapters that is a whole training run per mutant, although most
mutants (a wrong ``apply_rope`` when the model never calls it) cannot change
it. Here the cells are read as Python (names, not values) and:

1. a cell is *tainted* when it loads a name the variant may have changed: the
   names its replaced cells bind (in the variant's code or the reference's: a
   stub binds nothing), the names bound or mutated by tainted cells,
   and any function or class whose body loads one of them (looked up when
   called, so a helper defined in the set-up cell that calls ``softmax``
   follows ``softmax``). A plain assignment in a cell that is not tainted
   binds a value the reference computes too: the name is clean again;
2. the fork runs the tainted cells and, going backwards, every cell that binds
   or may mutate a name a cell it runs loads (the state those cells read).

Every other cell is left to the reference run, whose record it shares (a cell
that loads no changed name gives the reference's result). Names are what is
read, so where a cell reaches ``globals()`` (itself or through a helper), its
identifier-like string constants count as loads (``retry_with_reference``'s
``references``), and a cell that cannot be parsed
makes the fork run everything after it. What it cannot see: state changed
behind a module (``torch.set_default_dtype``, the global random generator),
which no plausible mistake touches and no test may depend on (tests seed
themselves); ``test_verdicts.py`` checks the result against the real grader.
"""
from __future__ import annotations

import ast
import builtins
import functools
from dataclasses import dataclass, field

__all__ = ["CellNames", "cell_names", "cells_to_run"]

@dataclass
class CellNames:
    """What one cell does with the names of the notebook's namespace."""

    loads: set[str] = field(default_factory=set)  # read as it runs (not inside the functions it only defines)
    binds: set[str] = field(default_factory=set)  # bound at top level: assignments, imports, defs, loop targets
    sure_binds: set[str] = field(default_factory=set)  # ... and bound whichever way the cell runs
    mutates: set[str] = field(default_factory=set)  # may be changed in place as it runs: receivers, arguments, targets
    bodies: dict[str, set[str]] = field(default_factory=dict)  # function or class -> the global names its body reads
    body_mutates: dict[str, set[str]] = field(default_factory=dict)  # ... and those it may change in place
    definitions: set[str] = field(default_factory=set)  # bound by an import, a def or a class statement
    strings: set[str] = field(default_factory=set)  # its identifier-like string constants (outside its functions')
    body_strings: dict[str, set[str]] = field(default_factory=dict)  # ... and those of each function it defines


def _python(source: str) -> str:
    """The cell as IPython runs it (magics and shell escapes turned into calls)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


def _nodes(node: ast.AST, scopes: bool):
    """`node` and what it contains; with `scopes` False, not the bodies of the functions and classes in it (their
    decorators, defaults and bases are evaluated where they are defined, and are kept)."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        if not scopes and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kept = [*n.decorator_list, *getattr(n, "bases", ()), *(k.value for k in getattr(n, "keywords", ()))]
            arguments = getattr(n, "args", None)
            if arguments is not None:
                kept += [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
            todo.extend(kept)
            continue
        todo.extend(ast.iter_child_nodes(n))


def _loaded(node: ast.AST, scopes: bool = True) -> set[str]:
    """The names `node` reads."""
    return {n.id for n in _nodes(node, scopes) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}


def _root(node: ast.AST) -> str | None:
    """The name at the root of ``a.b[c].d`` (None for anything else)."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


# Methods that change their object (Python's containers, NumPy's, PyTorch's modules and optimisers; PyTorch's
# in-place operations end in "_").
_CHANGING = frozenset({
    "append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault", "add", "discard",
    "sort", "reverse", "fill", "resize", "put", "itemset", "setflags", "seed", "load_state_dict", "register_buffer",
    "register_parameter", "register_module", "add_module", "apply", "train", "eval", "to", "double", "float", "half",
    "zero_grad", "step", "backward", "write"})


def _mutated(node: ast.AST, scopes: bool = True, calls: bool = True) -> set[str]:
    """Names whose objects `node` may change in place: targets of item or attribute assignment and deletion, the
    receivers of changing methods and, with `calls`, every method's receiver and every call's arguments (what a
    cell does at the top level: where its control flow differs, any object it touches may end otherwise)."""
    found = set()
    for n in _nodes(node, scopes):
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Attribute) and (calls or n.func.attr in _CHANGING or n.func.attr.endswith("_")):
                found.add(_root(n.func.value))
            for arg in [*n.args, *(k.value for k in n.keywords)] if calls else ():
                found.add(_root(arg))
        elif isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)):
            found.add(_root(n))
        elif isinstance(n, ast.AugAssign):
            found.add(_root(n.target))
    found.discard(None)
    return found


def _locals(scope: ast.AST) -> set[str]:
    """The names local to a function or class `scope` (and to what it contains): its parameters and what it binds,
    less those it declares global."""
    bound, declared = set(), set()
    for n in ast.walk(scope):
        if n is scope:
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            bound.add(n.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            bound.update(a.asname or a.name.split(".")[0] for a in n.names)
        elif isinstance(n, ast.Global):
            declared.update(n.names)
    if isinstance(scope, ast.Lambda) or hasattr(scope, "args"):
        bound.update(a.arg for a in ast.walk(scope.args) if isinstance(a, ast.arg))
    return bound - declared


class _TopLevel(ast.NodeVisitor):
    """Collects the names bound at the top level: not inside functions, classes, lambdas or comprehensions."""

    def __init__(self, names: CellNames):
        self.names = names

    def visit_Name(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.names.binds.add(node.id)

    def _body(self, name: str, scope: ast.AST):
        free = _locals(scope)
        self.names.body_strings.setdefault(name, set()).update(_strings(scope))
        self.names.bodies.setdefault(name, set()).update(_loaded(scope) - free)
        # (A helper's body is read strictly: `WARNING_CLUES.items()` in every test's message does not change it.)
        self.names.body_mutates.setdefault(name, set()).update(_mutated(scope, calls=False) - free)

    def _scope(self, node):
        self.names.binds.add(node.name)
        self.names.definitions.add(node.name)
        self._body(node.name, node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def visit_Lambda(self, node):
        pass

    def visit_ListComp(self, node):  # (their variables are their own; what they read is in `loads`)
        pass

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

    def visit_Assign(self, node):
        # `f = lambda ...: ...`: a function whose body is looked up when called, as a def's.
        if isinstance(node.value, ast.Lambda):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self._body(target.id, node.value)
        self.generic_visit(node)

    def visit_Import(self, node):
        for alias in node.names:
            name = alias.asname or alias.name.split(".")[0]
            self.names.binds.add(name)
            self.names.definitions.add(name)

    def visit_ImportFrom(self, node):
        for alias in node.names:
            if alias.name == "*":
                raise SyntaxError("a star import binds names no one can read from the source")
            self.names.binds.add(alias.asname or alias.name)
            self.names.definitions.add(alias.asname or alias.name)

    def visit_NamedExpr(self, node):
        self.names.binds.add(node.target.id)
        self.visit(node.value)


# Calls through which a cell reads names given as strings (``globals()[name]``, ``retry_with_reference``'s
# ``references``): where a cell or a function it calls uses one, its identifier-like strings count as names read.
_BY_NAME = frozenset({"globals", "vars", "locals", "eval", "exec", "get_ipython", "__import__"})


def _strings(node: ast.AST, scopes: bool = True) -> set[str]:
    """The identifier-like string constants in `node`."""
    return {n.value for n in _nodes(node, scopes) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and n.value.isidentifier()}


def _targets(node: ast.AST | None) -> set[str]:
    return {t.id for t in ast.walk(node) if isinstance(t, ast.Name)} if node is not None else set()


def _reads(body: list[ast.stmt], bound: set[str]) -> tuple[set[str], set[str]]:
    """(the names `body` reads before it binds them, the names it has surely bound when it ends), statement by
    statement: a loop's or a branch's bindings may not happen, a `with` block's and a `try` block's are taken to."""
    bound, found = set(bound), set()
    for st in body:
        if isinstance(st, (ast.If, ast.While)):
            found |= _loaded(st.test, scopes=False) - bound
            for block in (st.body, st.orelse):
                found |= _reads(block, bound)[0]
        elif isinstance(st, (ast.For, ast.AsyncFor)):
            found |= _loaded(st.iter, scopes=False) - bound
            found |= _reads(st.body, bound | _targets(st.target))[0] | _reads(st.orelse, bound)[0]
        elif isinstance(st, (ast.With, ast.AsyncWith)):
            for item in st.items:
                found |= _loaded(item.context_expr, scopes=False) - bound
            inner, done = _reads(st.body, bound | set().union(*(_targets(i.optional_vars) for i in st.items)))
            found |= inner
            bound = done
        elif isinstance(st, ast.Try) or type(st).__name__ == "TryStar":
            inner, done = _reads(st.body, bound)
            found |= inner
            for handler in st.handlers:
                found |= (_loaded(handler.type, scopes=False) if handler.type else set()) - bound
                found |= _reads(handler.body, bound | ({handler.name} if handler.name else set()))[0]
            found |= _reads(st.orelse, done)[0] | _reads(st.finalbody, bound)[0]
            bound = done
        else:
            found |= _loaded(st, scopes=False) - bound
            names = CellNames()
            _TopLevel(names).visit(st)
            bound |= names.binds
    return found, bound


def _magics(tree: ast.AST) -> list[str]:
    """The code that the line and cell magics in `tree` (as IPython rewrites them) are given, where it is Python."""
    found = []
    for n in ast.walk(tree):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr in ("run_line_magic", "run_cell_magic")):
            for arg in n.args[1:]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.append(arg.value)  # (one that is not Python makes the cell unreadable: run everything)
    return found


@functools.lru_cache(maxsize=4096)  # (a chapter's plans read the same cells once per variant; never changed after)
def cell_names(source: str) -> CellNames | None:
    """What the cell `source` loads, binds and may mutate (None where it cannot be read as Python).

    A name a statement reads after an earlier statement of the cell surely bound it is not read from the namespace."""
    try:
        tree = ast.parse(_python(source))
        loads, sure = _reads(tree.body, set())
        names = CellNames(loads=loads, sure_binds=sure, mutates=_mutated(tree, scopes=False))
        _TopLevel(names).visit(tree)
    except (SyntaxError, ValueError):
        return None
    names.strings = _strings(tree, scopes=False)
    for magic in _magics(tree):  # (`%time y = f(1)`: the code a magic runs is read as the cell's own)
        inner = cell_names(magic)
        if inner is None:
            return None
        names.loads |= inner.loads
        names.binds |= inner.binds
        names.mutates |= inner.mutates
        names.strings |= inner.strings
    # A function the cell defines is most often called by it too (`def check(): ...` then `check()`): what its body
    # reads is read by the cell.
    names.loads |= set().union(*names.bodies.values())
    return names


def _closure(names: set[str], bodies: dict[str, set[str]]) -> set[str]:
    """`names` with every name the bodies of the functions among them load, transitively."""
    found, todo = set(names), list(names)
    while todo:
        for more in bodies.get(todo.pop(), ()):
            if more not in found:
                found.add(more)
                todo.append(more)
    return found


def cells_to_run(sources: list[str | None], replaced: set[int], reference: list[str | None] | None = None,
                 why: list[str] | None = None) -> set[int] | None:
    """The indices of the cells a variant's fork must run: `sources` are the notebook's code cells as the variant has
    them (None for a cell that is not code), `replaced` the indices of the cells it replaces (the fork starts at the
    first), `reference` the same cells as the reference has them: a replaced cell changes what either binds (a
    variant that raises, or a stub, binds none of the names the reference's cell binds). None: run every cell from
    the first replaced one (a cell could not be read). `why`, a list, gets a line per cell run saying why."""
    start = min(replaced)
    names = {i: cell_names(s) for i, s in enumerate(sources) if s is not None}
    if any(found is None for found in names.values()):
        return None
    instead = {i: cell_names(reference[i]) for i in replaced} if reference is not None else {}
    if any(found is None for found in instead.values()):
        return None
    bodies: dict[str, set[str]] = {}
    body_mutates: dict[str, set[str]] = {}
    untracked = set(dir(builtins))  # (a builtin passed as an argument, `isinstance(x, float)`, is not changed)
    definitions: set[str] = set()
    plain: set[str] = set()
    for found in names.values():
        if found is not None:
            for name, loads in found.bodies.items():
                bodies.setdefault(name, set()).update(loads)
            for name, changed in found.body_mutates.items():
                body_mutates.setdefault(name, set()).update(changed)
            definitions |= found.definitions
            plain |= found.binds - found.definitions
    # A function, a class or an imported name is bound once and never changed by being passed or called.
    untracked |= definitions - plain
    body_strings: dict[str, set[str]] = {}
    for found in names.values():
        for name, strings in found.body_strings.items():
            body_strings.setdefault(name, set()).update(strings)

    def reads_of(cell: CellNames) -> set[str]:
        """What the cell reads, with what the functions it calls read when it calls them."""
        reads = _closure(cell.loads, bodies)
        if reads & _BY_NAME:  # (names given as strings, read through globals() and the like)
            reads = _closure(reads | cell.strings | set().union(*(body_strings.get(f, ()) for f in reads)), bodies)
        return reads

    tainted: set[str] = set()
    dirty: list[int] = []
    for i in sorted(names):
        if i < start:
            continue
        cell = names[i]
        reads = reads_of(cell)
        if i in replaced or reads & tainted:
            if why is not None:
                why.append(f"cell {i} reads {sorted(reads & tainted)}" if i not in replaced else f"cell {i} replaced")
            dirty.append(i)
            changed = cell.mutates.union(*(body_mutates.get(f, ()) for f in reads))
            if i in replaced:  # (everything either version binds or changes, imports too: `from scipy... import`)
                for bound in (cell, instead.get(i, cell)):
                    tainted |= bound.binds | (bound.mutates - untracked)
            else:  # (an import binds the same module whoever runs it)
                tainted |= cell.binds - (cell.definitions - cell.bodies.keys())
            tainted |= changed - untracked
            # A function whose body reads a changed name gives changed results wherever it is called.
            tainted |= {f for f, loads in bodies.items() if _closure(loads, bodies) & tainted}
        else:
            tainted -= cell.sure_binds - cell.mutates
    run, needed = set(dirty), set()
    for i in sorted((i for i in names if i >= start), reverse=True):
        cell = names[i]
        reads = reads_of(cell)
        changed = cell.mutates.union(*(body_mutates.get(f, ()) for f in reads))
        if i not in run and (cell.binds | (changed - untracked)) & needed:
            if why is not None:
                why.append(f"cell {i} sets {sorted((cell.binds | (changed - untracked)) & needed)}, read later")
            run.add(i)
        if i in run:
            needed = (needed - (cell.sure_binds - cell.mutates)) | reads
    return run
