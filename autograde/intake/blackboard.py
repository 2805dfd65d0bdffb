"""Blackboard: its submissions export and its submission times.

- Grade Center "Assignment File Download": ``{Assignment}_{username}_attempt_{YYYY-MM-DD-HH-MM-SS}_{file}``,
  beside a ``{Assignment}_{username}_attempt_{date}.txt`` receipt per attempt.
- Times: the attempt's ``.txt`` receipt, ``Date Submitted: Sunday, 1 March 2026 22:10:05 o'clock CET``
  (or ``... 10:10:05 PM EST``), else the attempt time stamp in the file name, ``attempt_2026-03-01-22-10-05``
  (the server's local time, no zone); both read in the server's zone where ``Collect.blackboard_zone`` names it.
"""
from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from traitlets import TraitError

from .adapter import Entry, Layout, Reader, SubmissionTime

BLACKBOARD_RECEIPT = "Blackboard receipt (Date Submitted)"
BLACKBOARD_NAME = "Blackboard attempt time in the file name"
# The help of the setting c.Collect.blackboard_zone (--blackboard-zone).
ZONE_HELP = ("the time zone of the Blackboard server, by its IANA name (Asia/Kolkata, America/Chicago): reads the zone "
             "abbreviation of a receipt's Date Submitted (CST, IST, ... name several zones) and the attempt time of a "
             "file name. Empty: only abbreviations one zone alone uses are read, and other times are read in the due "
             "date's zone")

# Blackboard writes a zone abbreviation. Without the server's zone (Collect.blackboard_zone), only these are read,
# each used by one zone's time alone; one that several zones use (CST: US Central, China, Cuba; IST: India, Ireland,
# Israel; BST: British summer, Bangladesh) or an unknown one leaves the time naive, read in the due date's zone.
_ABBREVIATIONS = {"UTC": 0, "GMT": 0, "Z": 0, "WET": 0, "WEST": 1, "CET": 1, "CEST": 2, "EET": 2,
                  "EEST": 3, "MSK": 3, "EST": -5, "EDT": -4, "MST": -7, "MDT": -6,
                  "PST": -8, "PDT": -7, "AKST": -9, "AKDT": -8, "HST": -10, "AEST": 10, "AEDT": 11, "ACST": 9.5,
                  "ACDT": 10.5, "AWST": 8, "NZST": 12, "NZDT": 13, "JST": 9, "KST": 9, "SGT": 8, "HKT": 8}

_BLACKBOARD = re.compile(r"^(?P<assignment>.+?)_(?P<user>[^_]+)_attempt_(?P<date>\d{4}(?:-\d\d){5})(?:_(?P<file>.+)|\.txt)$")


def _blackboard(root: Path, pattern: str) -> Reader:
    def read(rel: PurePosixPath) -> list[Entry]:
        found = _BLACKBOARD.match(rel.name) if len(rel.parts) == 1 else None
        if not found:
            return []
        return [Entry(found["user"], found["user"], found["file"] or rel.name, found["assignment"],
                      attempt=(found["date"],))]
    return read


def known_zone(value: str) -> str:
    """The setting c.Collect.blackboard_zone, `value`, stripped: empty or a zone this machine knows; TraitError
    saying what to give otherwise."""
    name = value.strip()
    if name:
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise TraitError(f"--blackboard-zone {name!r} is no time zone this machine knows: give an IANA name "
                             "such as Asia/Kolkata or America/Chicago") from None
    return name


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


def _times(root: Path, rel: PurePosixPath, entry: Entry, zipped: bool,
           blackboard_zone: ZoneInfo | None) -> SubmissionTime | None:
    if not entry.attempt:
        return None
    receipt = root / rel.parent / f"{entry.context}_{entry.lms_id}_attempt_{entry.attempt[0]}.txt"
    when = blackboard_receipt(receipt.read_text(errors="replace"), blackboard_zone) if receipt.is_file() else None
    if when is not None:
        return SubmissionTime(when, BLACKBOARD_RECEIPT, record=str(receipt.relative_to(root)))
    when = blackboard_name(entry.attempt[0], blackboard_zone)
    return SubmissionTime(when, BLACKBOARD_NAME) if when else None


LAYOUT = Layout("blackboard", "Blackboard", _blackboard, times=_times)
