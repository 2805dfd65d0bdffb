"""nbgrader's own submitted layout, ``{student}/{assignment}/{assignment}.ipynb``, and its submission times.

Times: ``timestamp.txt`` beside the notebook (``<student>/<assignment>/timestamp.txt``), written by
``nbgrader submit`` / ``collect`` as ``2026-03-01 22:10:05.123456 UTC`` (``timestamp_format``
``%Y-%m-%d %H:%M:%S.%f %Z``) and by ``zip_collect`` as ISO 8601; read with nbgrader's own
:func:`nbgrader.utils.parse_utc` (no zone: UTC, as nbgrader reads it).
"""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath

from .adapter import Entry, Layout, Reader, SubmissionTime, clean_stem

NBGRADER_TIMESTAMP = "timestamp.txt"
STAMP_SLACK = timedelta(minutes=2)  # nbgrader writes the stamp as it copies: seconds apart, never minutes
NBGRADER = "nbgrader timestamp.txt"


def _nbgrader(root: Path, pattern: str) -> Reader:
    def read(rel: PurePosixPath) -> list[Entry]:
        # (A notebook renamed by Colab, Drive or Jupyter, "Copy of <a> (1).ipynb", is still <a>.ipynb.)
        if len(rel.parts) != 3 or (rel.suffix == ".ipynb" and clean_stem(rel.name) != rel.parts[1].lower()):
            return []
        return [Entry(rel.parts[0], "", rel.name, rel.parts[1])]
    return read


def nbgrader_timestamp(text: str) -> datetime | None:
    """The time in an nbgrader ``timestamp.txt`` (aware, UTC), or None if it is empty or unreadable."""
    from nbgrader.utils import parse_utc

    text = text.strip()
    if not text:
        return None
    try:
        parsed = parse_utc(text)  # (naive UTC, as nbgrader keeps it)
    except (ValueError, OverflowError, TypeError):
        return None
    return parsed.replace(tzinfo=UTC)


def _dated_after(notebook: Path, stamp: datetime) -> datetime | None:
    """The notebook's modification time where it is later than its nbgrader `stamp` by more than STAMP_SLACK."""
    try:
        dated = datetime.fromtimestamp(notebook.stat().st_mtime, UTC)
    except OSError:
        return None
    return dated if dated - stamp.astimezone(UTC) > STAMP_SLACK else None


def _times(root: Path, rel: PurePosixPath, entry: Entry, zipped: bool, zone) -> SubmissionTime | None:
    stamp = root / rel.parent / NBGRADER_TIMESTAMP
    if not stamp.is_file():
        return None
    text = stamp.read_text(errors="replace")
    when = nbgrader_timestamp(text)
    # Only `nbgrader submit`'s stamp ("... UTC") is written as the notebook is copied: zip_collect writes an
    # LMS's time beside a copy dated when it ran, and a zip's dates are its maker's local time.
    checked = when is not None and not zipped and text.strip().endswith("UTC")
    return SubmissionTime(when, NBGRADER, record=str(rel.parent / NBGRADER_TIMESTAMP),
                          dated_after_stamp=_dated_after(root / rel, when) if checked else None) if when else None


LAYOUT = Layout("nbgrader", "nbgrader", _nbgrader, times=_times, flat=False, folder_students=True)
