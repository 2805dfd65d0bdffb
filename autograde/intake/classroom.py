"""Google Classroom / Drive: the copy Classroom makes for each student, ``{Student Name} - {file}``, with Drive's
``Copy of`` and `` (1)`` where a name repeats. The names carry no user id, and no time."""
from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from .adapter import Entry, Layout, Reader, safe_id

_CLASSROOM = re.compile(r"^(?P<name>.+?) - (?P<file>.+)$")


def _classroom(root: Path, pattern: str) -> Reader:
    def read(rel: PurePosixPath) -> list[Entry]:
        found = _CLASSROOM.match(rel.name) if len(rel.parts) == 1 else None
        return [Entry(safe_id(found["name"]), "", found["file"])] if found else []
    return read


LAYOUT = Layout("classroom", "Google Classroom", _classroom, names_only=True)
