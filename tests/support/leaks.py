"""The lines of solution code and hidden tests that no student-facing page may show."""
from __future__ import annotations

import functools
import re

from autograde.course import assignment_ids, source_notebook

SECRET_BLOCK = re.compile(r"### BEGIN (?:SOLUTION|HIDDEN TESTS)\n(.*?)### END (?:SOLUTION|HIDDEN TESTS)", re.S)


@functools.cache
def public_lines() -> frozenset[str]:
    """Stripped lines that some source shows students anyway (outside solutions and hidden tests)."""
    return frozenset(line.strip() for a in assignment_ids() for cell in source_notebook(a).cells
                     for line in SECRET_BLOCK.sub("", cell.source).splitlines())


def secret_lines(assignment: str) -> list[str]:
    """Non-trivial lines of solution code and hidden tests in the source of `assignment`."""
    lines = [line.strip() for cell in source_notebook(assignment).cells
             for block in SECRET_BLOCK.findall(cell.source) for line in block.splitlines()]
    # Short lines ("return out"), imports, random generators and lines students see elsewhere give nothing away.
    public = public_lines()
    boilerplate = re.compile(r"^(#|import |from \S+ import |rng = np\.random\.default_rng\(\d+\)$)")
    return [line for line in lines if len(line) >= 25 and not boilerplate.match(line) and line not in public]
