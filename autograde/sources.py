"""Reading Python source without running it: the names a cell defines and reads.

Several steps need this (normalise matches answer cells by the names they
define; the course model finds which given cells use the student's answers),
so it lives apart from all of them and imports nothing of the package.
"""
from __future__ import annotations

import ast


def defined_names(source: str) -> list[str]:
    """Global names that `source` binds outside function bodies (assignments, loops, with, defs, classes, imports)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names: list[str] = []

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
            return  # names inside are local to it
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.extend((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.append(node.name)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return sorted(set(names))


def free_names(source: str) -> set[str]:
    """Names that `source` reads but never binds itself: what it needs from earlier cells.

    A given cell whose free names include an answer's must run where the
    answers are (the student's kernel), not in the checker.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    loaded, stored = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else stored).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stored.add(node.name)
        elif isinstance(node, ast.arg):
            stored.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            stored.update((a.asname or a.name).split(".")[0] for a in node.names)
    return loaded - stored

