"""Gradescope's "Export Submissions" (not its autograder, :mod:`autograde.gradescope`): a folder ``submission_{id}``
per submission and ``submission_metadata.yml``, which names each one's ``:submitters:`` (``:name:``, ``:sid:``,
``:email:``) and its ``:created_at:``, ``2026-03-01 22:10:05.123456000 +01:00``."""
from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from .adapter import Entry, Layout, Reader, SubmissionTime, safe_id

GRADESCOPE = "Gradescope submission_metadata.yml :created_at:"
GRADESCOPE_METADATA = "submission_metadata.yml"


def _gradescope(root: Path, pattern: str) -> Reader:
    metadata = root / GRADESCOPE_METADATA
    submissions: dict = {}
    if metadata.is_file():
        import yaml

        try:
            loaded = yaml.safe_load(metadata.read_text(errors="replace"))
        except yaml.YAMLError:
            loaded = None
        submissions = loaded if isinstance(loaded, dict) else {}

    def read(rel: PurePosixPath) -> list[Entry]:
        record = submissions.get(rel.parts[0]) if len(rel.parts) > 1 else None
        if not isinstance(record, dict):
            return []
        when = str(record.get(":created_at", ""))
        entries = []
        for person in record.get(":submitters") or []:  # a group's submission belongs to each of its members
            if isinstance(person, dict) and (person.get(":name") or person.get(":email")):
                who = str(person.get(":name") or str(person.get(":email")).split("@")[0])
                entries.append(Entry(safe_id(who), str(person.get(":sid") or person.get(":email") or ""),
                                     rel.name, attempt=(when,)))
        return entries
    return read


def gradescope_created_at(value) -> datetime | None:
    """Gradescope's ``:created_at:`` as YAML loaded it (a datetime, or text it did not read as one); aware."""
    import dateutil.parser

    if isinstance(value, str):
        try:
            value = dateutil.parser.parse(value)
        except (ValueError, OverflowError):
            return None
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)  # (YAML: a time without a zone is UTC)


def _times(root: Path, rel: PurePosixPath, entry: Entry, zipped: bool, zone) -> SubmissionTime | None:
    if not entry.attempt:
        return None
    when = gradescope_created_at(entry.attempt[0])
    return SubmissionTime(when, GRADESCOPE) if when else None


def _student_folder(name: str) -> bool:
    return bool(re.fullmatch(r"submission_\d+", name))


# (Its students are always folders, one per submission; its metadata file sits beside them, in the class's folder.)
LAYOUT = Layout("gradescope", "Gradescope", _gradescope, times=_times, student_folder=_student_folder,
                class_file=GRADESCOPE_METADATA, flat=False)
