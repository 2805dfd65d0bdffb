"""Plain folders: one folder per student, or ``{student}_{anything}`` files (``--student-pattern``); no times."""
from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from .adapter import Entry, Layout, Reader


def _folders(root: Path, pattern: str) -> Reader:
    compiled = re.compile(pattern)

    def read(rel: PurePosixPath) -> list[Entry]:
        if len(rel.parts) >= 2:
            return [Entry(rel.parts[0], "", rel.name)]
        found = compiled.search(rel.name)
        student = found.group("student") if found else None
        return [Entry(student, "", rel.name)] if student else []
    return read


# (The fallback: it claims any notebook with a folder or a name prefix, so the registry tries it last.)
LAYOUT = Layout("folders", "one folder (or name prefix) per student", _folders, folder_students=True,
                unclaimed="no student id in the path or file name")
