"""When each submission was handed in, as the export itself says it.

Each system says it in its own place and format:

- nbgrader: ``timestamp.txt`` beside the notebook (``<student>/<assignment>/timestamp.txt``), written by
  ``nbgrader submit`` / ``collect`` as ``2026-03-01 22:10:05.123456 UTC`` (``timestamp_format``
  ``%Y-%m-%d %H:%M:%S.%f %Z``) and by ``zip_collect`` as ISO 8601; read with nbgrader's own
  :func:`nbgrader.utils.parse_utc` (no zone: UTC, as nbgrader reads it).
- Gradescope: ``submission_metadata.yml``, ``:created_at: 2026-03-01 22:10:05.123456000 +01:00``.
- Blackboard: the attempt's ``.txt`` receipt, ``Date Submitted: Sunday, 1 March 2026 22:10:05 o'clock CET``
  (or ``... 10:10:05 PM EST``), else the attempt time stamp in the file name, ``attempt_2026-03-01-22-10-05``
  (the server's local time, no zone); both read in the server's zone where ``Collect.blackboard_zone`` names it.
- Moodle: the grading worksheet's column ``Last modified (submission)``,
  ``Sunday, 1 March 2026, 10:10 PM`` (``strftimedaydatetime``, in the downloading teacher's time zone, which
  the file does not name); ``-`` where nothing was submitted.
- Canvas: no time, only ``LATE`` in the file name; Canvas's own gradebook applies its late policy.
- A zip entry's date is no evidence (it can be when the teacher downloaded the export): where the export says
  nothing else, the time is unknown, not penalised, and listed.

A time without a zone (Moodle's, Blackboard's file name) is kept naive here and read in the due
date's time zone by :mod:`autograde.results.late`, which says so.
"""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo

from . import moodle

NBGRADER_TIMESTAMP = "timestamp.txt"
STAMP_SLACK = timedelta(minutes=2)  # nbgrader writes the stamp as it copies: seconds apart, never minutes
NBGRADER = "nbgrader timestamp.txt"
GRADESCOPE = "Gradescope submission_metadata.yml :created_at:"
BLACKBOARD_RECEIPT = "Blackboard receipt (Date Submitted)"
BLACKBOARD_NAME = "Blackboard attempt time in the file name"
MOODLE = "Moodle grading worksheet (Last modified (submission))"
CANVAS = "Canvas (no time in the export; Canvas's gradebook applies its own late policy)"
MOODLE_COLUMN = "Last modified (submission)"

# Blackboard writes a zone abbreviation. Without the server's zone (Collect.blackboard_zone), only these are read,
# each used by one zone's time alone; one that several zones use (CST: US Central, China, Cuba; IST: India, Ireland,
# Israel; BST: British summer, Bangladesh) or an unknown one leaves the time naive, read in the due date's zone.
_ABBREVIATIONS = {"UTC": 0, "GMT": 0, "Z": 0, "WET": 0, "WEST": 1, "CET": 1, "CEST": 2, "EET": 2,
                  "EEST": 3, "MSK": 3, "EST": -5, "EDT": -4, "MST": -7, "MDT": -6,
                  "PST": -8, "PDT": -7, "AKST": -9, "AKDT": -8, "HST": -10, "AEST": 10, "AEDT": 11, "ACST": 9.5,
                  "ACDT": 10.5, "AWST": 8, "NZST": 12, "NZDT": 13, "JST": 9, "KST": 9, "SGT": 8, "HKT": 8}


@dataclass(frozen=True)
class SubmissionTime:
    """When one submission was handed in, and which evidence says so."""

    when: datetime | None = None  # aware; naive where the evidence names no zone; None: unknown
    source: str = ""  # which evidence gave it (one of this module's constants)
    lms_policy: bool = False  # the LMS applies its own late policy (Canvas): no penalty here
    marked_late: bool = False  # the LMS marked it late (Canvas's LATE)
    record: str = ""  # the export's file the time was read from (relative to it), if a file of its own gave it
    # nbgrader's timestamp.txt sits in the student's own folder: the notebook beside it dated later than the stamp
    # (by more than STAMP_SLACK) is flagged for the instructor, not penalised (a copy without dates would make every
    # notebook look later). Its date, aware, where it is.
    dated_after_stamp: datetime | None = None


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


def blackboard_receipt(text: str, zone: ZoneInfo | None = None) -> datetime | None:
    """The ``Date Submitted:`` line of a Blackboard receipt: aware where its zone is known, else naive; None if none.

    With `zone`, the server's time zone, the abbreviation picks that zone's reading of the wall-clock time (the
    earlier or later of the hour daylight saving time repeats); an abbreviation the zone does not use then is read
    from the table of unambiguous ones, else the time is read in `zone`."""
    import dateutil.parser

    found = re.search(r"^\s*Date Submitted:\s*(.+?)\s*$", text, re.MULTILINE)
    if not found:
        return None
    stamp = found[1].replace("o'clock", " ").strip()
    named = re.search(r"\s([A-Z]{1,5})$", stamp)
    named = named if named and named[1] not in ("AM", "PM") else None  # (a 12-hour clock's half of the day is no zone)
    abbreviation = named[1] if named else None
    if named:
        stamp = stamp[:named.start()]
    try:
        parsed = dateutil.parser.parse(stamp)
    except (ValueError, OverflowError):
        return None
    if parsed.tzinfo is not None:
        return parsed
    if zone is not None:
        readings = [parsed.replace(tzinfo=zone, fold=fold) for fold in (0, 1)]
        matching = [r for r in readings if r.tzname() == abbreviation]
        if matching or abbreviation is None:
            # (As an instant in UTC: Python never finds a time of the repeated hour equal to any other zone's.)
            return (matching or readings)[0].astimezone(UTC)
    offset = _ABBREVIATIONS.get(abbreviation)
    if offset is not None:
        return parsed.replace(tzinfo=timezone(timedelta(hours=offset)))
    return parsed.replace(tzinfo=zone).astimezone(UTC) if zone is not None else parsed


def blackboard_name(stamp: str, zone: ZoneInfo | None = None) -> datetime | None:
    """The attempt time stamp of a Blackboard file name, ``2026-03-01-22-10-05``: the server's local time, in `zone`
    where it is given, else naive."""
    try:
        parsed = datetime.strptime(stamp, "%Y-%m-%d-%H-%M-%S")
    except ValueError:
        return None
    return parsed.replace(tzinfo=zone).astimezone(UTC) if zone is not None else parsed


def moodle_date(text: str) -> datetime | None:
    """A date of Moodle's grading worksheet (``Sunday, 1 March 2026, 10:10 PM``, or as German, French or Spanish
    Moodle writes it; naive), None for ``-`` or other text (:func:`autograde.intake.moodle.date`)."""
    return moodle.date(text)


def moodle_worksheet_times(path: Path) -> dict[str, datetime | None]:
    """Participant id -> the worksheet's ``Last modified (submission)`` (naive), for a Moodle grading worksheet;
    {} for any other file (a Canvas gradebook has no such column)."""
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
        rows = list(csv.reader(f))
    if not rows:
        return {}
    found_columns = moodle.columns(rows[0])
    if "identifier" not in found_columns or MOODLE_COLUMN.lower() not in found_columns:
        return {}
    who, when = found_columns["identifier"], found_columns[MOODLE_COLUMN.lower()]
    found = {}
    for row in rows[1:]:
        number = re.search(r"(\d+)\s*$", row[who]) if len(row) > who else None
        if number:
            found[number[1]] = moodle_date(row[when]) if len(row) > when else None
    return found


def _dated_after(notebook: Path, stamp: datetime) -> datetime | None:
    """The notebook's modification time where it is later than its nbgrader `stamp` by more than STAMP_SLACK."""
    try:
        dated = datetime.fromtimestamp(notebook.stat().st_mtime, UTC)
    except OSError:
        return None
    return dated if dated - stamp.astimezone(UTC) > STAMP_SLACK else None


def evidence(layout: str, root: Path, rel: PurePosixPath, entry, zipped: bool,
             blackboard_zone: ZoneInfo | None = None) -> SubmissionTime:
    """When the file `rel` of the export in `root`, read by `layout` as `entry` (:class:`autograde.intake.lms.Entry`),
    was handed in, as the export says (unknown where it says nothing: a zip entry's date is no evidence)."""
    found: SubmissionTime | None = None
    if layout == "canvas":
        return SubmissionTime(None, CANVAS, lms_policy=True, marked_late=entry.late)
    if layout == "nbgrader":
        stamp = root / rel.parent / NBGRADER_TIMESTAMP
        if stamp.is_file():
            text = stamp.read_text(errors="replace")
            when = nbgrader_timestamp(text)
            # Only `nbgrader submit`'s stamp ("... UTC") is written as the notebook is copied: zip_collect writes an
            # LMS's time beside a copy dated when it ran, and a zip's dates are its maker's local time.
            checked = when is not None and not zipped and text.strip().endswith("UTC")
            found = SubmissionTime(when, NBGRADER, record=str(rel.parent / NBGRADER_TIMESTAMP),
                                   dated_after_stamp=_dated_after(root / rel, when) if checked else None) if when else None
    elif layout == "gradescope" and entry.attempt:
        when = gradescope_created_at(entry.attempt[0])
        found = SubmissionTime(when, GRADESCOPE) if when else None
    elif layout == "blackboard" and entry.attempt:
        receipt = root / rel.parent / f"{entry.context}_{entry.lms_id}_attempt_{entry.attempt[0]}.txt"
        when = blackboard_receipt(receipt.read_text(errors="replace"), blackboard_zone) if receipt.is_file() else None
        if when is not None:
            found = SubmissionTime(when, BLACKBOARD_RECEIPT, record=str(receipt.relative_to(root)))
        else:
            when = blackboard_name(entry.attempt[0], blackboard_zone)
            found = SubmissionTime(when, BLACKBOARD_NAME) if when else None
    return found if found is not None else SubmissionTime()
