"""Compile ``solutions/<a>/<a>.py`` into the student notebook ``exercises/<a>/<a>.ipynb``."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import nbformat

from .course import COURSE, EXERCISES, make_course, source_notebook


def compile_assignments(assignments: list[str], dest: Path = EXERCISES) -> list[Path]:
    """Generate the student notebooks of `assignments` into ``dest/<a>/<a>.ipynb``.

    Runs jupytext then ``nbgrader generate_assignment`` in a scratch course
    directory, so no gradebook or other state is left behind. Returns the
    written paths.
    """
    written = []
    with tempfile.TemporaryDirectory(prefix="autograde-compile-") as tmp:
        root = Path(tmp)
        make_course(root, assignments)
        for assignment in assignments:
            target = dest / assignment / f"{assignment}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / "release" / assignment / f"{assignment}.ipynb", target)
            written.append(target)
    return written


def write_nbgrader_sources(assignments: list[str]) -> list[Path]:
    """Write ``course/source/<a>/<a>.ipynb``, the source folder of nbgrader's own commands (git-ignored)."""
    written = []
    for assignment in assignments:
        target = COURSE / "source" / assignment / f"{assignment}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(source_notebook(assignment), target)
        written.append(target)
    return written
