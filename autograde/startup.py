"""What a grading process does before anything else: leave out an import that costs much and serves nothing here.

jsonschema, which nbformat imports, imports ``rfc3987_syntax`` wherever it is
installed (jupyter-events asks for it), and that module compiles 38 grammars as
it is imported: 1.2 s of CPU in the grading command and again in each worker
process it spawns, for IRI format checks that grading never makes (nbformat
validates no formats).
"""
from __future__ import annotations

import sys

UNUSED = ("rfc3987_syntax",)


def skip_unused_imports() -> None:
    """Make the modules :data:`UNUSED` unimportable in this process (an ``import`` of one raises ImportError, which
    jsonschema expects of an optional package). Call it before anything imports nbformat; it changes nothing where
    one of them was imported already."""
    for name in UNUSED:
        sys.modules.setdefault(name, None)
