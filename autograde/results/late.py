"""Due dates, late penalties and per-student extensions, applied after grading.

The policy (``c.LatePolicy.<name>`` in nbgrader_config.py, or ``--due``, ``--late-penalty``, ``--extensions``):
a due date with its time zone; a penalty in percent of the maximum score for each started day or hour after
the grace period; a cap on what is ever deducted. It is nbgrader's own late-penalty plugin
(:class:`nbgrader.plugins.LateSubmissionPlugin`, ``late_submission_penalty(student_id, score,
total_seconds_late)``), so the same class can be nbgrader's ``c.AssignLatePenalties.plugin_class``, and its
penalty means the same there: a percent of the notebook's maximum score, read from nbgrader's gradebook.

It is applied to the graded totals, never inside a grade: the result cache keeps grades, and a changed due date,
rule or extension gives the new penalty at once (its settings are left out of the cache key). Lateness is measured
between two instants (time zones and daylight saving time change nothing); a time the export gives without a
zone is read in the due date's zone, and the output says so. A submission whose time is unknown is not
penalised, and is listed (on screen, in grades.csv's ``time_source``, in the report).
"""
from __future__ import annotations

import csv
import logging
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Enum, Float, Unicode

from ..course import assignment_ids
from ..intake import times as evidence
from ..intake.times import SubmissionTime
from .classify import CellResult
from .totals import submissions

log = logging.getLogger(__name__)

UNITS = {"day": 86400.0, "hour": 3600.0}
LATE_COLUMNS = ["raw_score", "late_penalty", "submitted_at", "late_by", "time_source"]
UNKNOWN = "unknown"  # time_source of a submission handed in whose time the export does not say
_RULE = re.compile(r"^\s*(?P<percent>\d+(?:\.\d+)?)\s*%?\s*(?:/|per\s+)\s*(?P<per>day|hour)s?\s*$", re.IGNORECASE)
# A date-time (its time after a "T" or a space) followed by a zone name: "2026-03-01 23:59 Europe/Berlin".
_ZONE_NAME = re.compile(r"^(?P<stamp>\d{4}-\d{2}-\d{2}(?:[T ]\S+)?)\s+(?P<zone>[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+)*)$")


def parse_when(text: str, zone: tzinfo | None = None, what: str = "the due date") -> datetime:
    """An ISO 8601 date-time with its time zone (``2026-03-01T23:59+01:00``, ``...Z``, or followed by an IANA zone
    name, ``2026-03-01T23:59 Europe/Berlin`` or ``2026-03-01 23:59 Europe/Berlin``) as an aware datetime. Without a zone: read in `zone` if given, else
    ValueError (a due date must say its zone)."""
    text = text.strip()
    named = _ZONE_NAME.match(text)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", named["stamp"] if named else text):  # (else: that day's first minute)
        raise ValueError(f"{what} {text!r} gives no time of day" + (
            ": write it too, like 2026-03-05T23:59" if zone is not None or named else
            " and no time zone: write both, like 2026-03-01T23:59+01:00 or 2026-03-01T23:59 Europe/Berlin"))
    try:
        when = datetime.fromisoformat(named["stamp"] if named else text)
    except ValueError:
        raise ValueError(f"{what} {text!r} is not an ISO 8601 date-time (write it like 2026-03-01T23:59+01:00)") from None
    if named:
        if when.tzinfo is not None:
            raise ValueError(f"{what} {text!r} gives both an offset and a zone name: give one")
        try:
            when = when.replace(tzinfo=ZoneInfo(named["zone"]))
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"{what} {text!r}: no time zone is named {named['zone']!r}") from None
    if when.tzinfo is None:
        if zone is None:
            raise ValueError(f"{what} {text!r} has no time zone, so when it falls cannot be told: write it with an "
                             "offset (2026-03-01T23:59+01:00) or a zone name (2026-03-01T23:59 Europe/Berlin)")
        when = when.replace(tzinfo=zone)
    return when


class LatePolicy(LateSubmissionPlugin):
    """When work is due and what lateness costs (``c.LatePolicy.<name>`` in nbgrader_config.py). No due date: no
    penalty. None of these settings changes a grade before the penalty, so none is in the result cache's key."""

    # (nbgrader's own setting, unused here: this class computes the penalty itself)
    penalty_method = Enum(("none", "zero"), "none", help="unused: the penalty follows LatePolicy.penalty"
                          ).tag(config=True, grades=False)
    due = Unicode("", help="the due date, ISO 8601 with its time zone: 2026-03-01T23:59+01:00, or with a zone "
                           "name, 2026-03-01T23:59 Europe/Berlin (a date without a zone is refused). Empty: no "
                           "late penalty").tag(config=True, grades=False)
    penalty = Float(0.0, min=0.0, help="percent of the maximum score deducted for each started unit (LatePolicy.per) "
                                       "after the grace period").tag(config=True, grades=False)
    per = Enum(list(UNITS), "day", help="the unit of lateness that each costs LatePolicy.penalty percent: 'day' "
                                        "(24 hours) or 'hour'").tag(config=True, grades=False)
    late_penalty = Unicode("", help="the penalty and its unit in one, as --late-penalty takes it: '10%/day' or "
                                    "'5%/hour' (over LatePolicy.penalty and LatePolicy.per)"
                           ).tag(config=True, grades=False)
    cap = Float(100.0, min=0.0, max=100.0, help="the most ever deducted, in percent of the maximum score"
                ).tag(config=True, grades=False)
    grace = Float(0.0, min=0.0, help="grace period in minutes: a submission this late or less is on time, and "
                                     "units of lateness are counted from its end").tag(config=True, grades=False)
    extensions = Unicode("", help="CSV of per-student extensions: a column student_id or lms_user_id, and a "
                                  "column due (a new due date; without a zone, in the due date's) or days (extra "
                                  "days); an optional column assignment limits a row to one assignment"
                         ).tag(config=True, grades=False)

    def due_date(self) -> datetime | None:
        """The due date (aware), or None when none is set; ValueError for one without a zone."""
        return parse_when(self.due) if self.due.strip() else None

    def rule(self) -> tuple[float, str]:
        """(percent per unit, unit): from ``late_penalty`` where set, else ``penalty`` and ``per``."""
        if not self.late_penalty.strip():
            return self.penalty, self.per
        found = _RULE.match(self.late_penalty)
        if not found:
            raise ValueError(f"--late-penalty {self.late_penalty!r}: write it as PERCENT%/day or PERCENT%/hour "
                             "(e.g. 10%/day)")
        return float(found["percent"]), found["per"].lower()

    def describe(self) -> str:
        """The rule in words: '10% of the maximum score per started day late, after 15 minutes' grace, at most 50%'."""
        percent, per = self.rule()
        grace = f", counted after a grace period of {self.grace:g} minutes" if self.grace else ""
        return f"{percent:g}% of the maximum score for each started {per} late{grace}, at most {self.cap:g}%"

    def units_late(self, seconds_late: float) -> int:
        """The started units of lateness after the grace period (0 within it)."""
        grace = self.grace * 60
        if seconds_late <= grace:
            return 0
        return math.ceil((seconds_late - grace) / UNITS[self.rule()[1]])

    def percent_deducted(self, seconds_late: float) -> float:
        """Percent of the maximum score deducted for a submission `seconds_late` late: units × penalty, capped."""
        return min(self.units_late(seconds_late) * self.rule()[0], self.cap)

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float,
                                max_score: float | None = None) -> float:
        """The points deducted, with one meaning however it is called: the percent of :meth:`percent_deducted` of
        the notebook's maximum score, never more than `score`. nbgrader's own call (its ``AssignLatePenalties``,
        with this class as ``plugin_class``) passes no `max_score`: it is read from nbgrader's gradebook, for the
        notebook that preprocessor is grading."""
        if max_score is None:
            max_score = self._max_score_in_nbgrader(student_id)
        return min(score, round(max_score * self.percent_deducted(total_seconds_late) / 100, 6))

    def _max_score_in_nbgrader(self, student_id: str) -> float:
        """The maximum score of the notebook nbgrader's ``AssignLatePenalties`` (this plugin's parent) is grading."""
        grader = self.parent
        try:
            notebook = grader.gradebook.find_submission_notebook(grader.notebook_id, grader.assignment_id, student_id)
        except AttributeError:
            raise TypeError("LatePolicy.late_submission_penalty takes its percent of the maximum score: give "
                            "max_score, or let nbgrader's AssignLatePenalties call it") from None
        return float(notebook.max_score)


@dataclass(frozen=True)
class Extension:
    """One student's extension: a new due date, or extra days."""

    due: datetime | None = None
    days: float = 0.0
    assignment: str = ""  # "" for every assignment

    def applied(self, due: datetime) -> datetime:
        """The due date with this extension (extra days on the wall clock of the due date's zone)."""
        return self.due if self.due is not None else due + timedelta(days=self.days)

    def describe(self) -> str:
        return f"extended to {self.due.isoformat()}" if self.due is not None else f"extended by {self.days:g} day(s)"


def read_extensions(path: Path, zone: tzinfo) -> dict[str, list[Extension]]:
    """Extensions by student id or LMS user id (both keys as written); ValueError naming the row for a bad one."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        columns = {c.strip().lower(): c for c in reader.fieldnames or []}
        if not ({"student_id", "lms_user_id"} & set(columns)) or not ({"due", "days"} & set(columns)):
            raise ValueError(f"extensions {path}: needs a column student_id or lms_user_id, and a column due "
                             f"(new due date) or days (extra days); its columns are {', '.join(columns) or 'none'}")
        found: dict[str, list[Extension]] = {}
        for number, row in enumerate(reader, start=2):
            cell = {name: (row.get(original) or "").strip() for name, original in columns.items()}
            who = cell.get("student_id") or cell.get("lms_user_id")
            if not who:
                continue
            where = f"extensions {path}, line {number}"
            if cell.get("due"):
                extension = Extension(due=parse_when(cell["due"], zone, f"{where}: the due date"))
            else:
                try:
                    extension = Extension(days=float(cell.get("days", "").replace(",", ".")))
                except ValueError:
                    raise ValueError(f"{where}: give a new due date or a number of days, not "
                                     f"{cell.get('days')!r}") from None
            if cell.get("assignment") and cell["assignment"] not in assignment_ids():  # (else it silently does nothing)
                raise ValueError(f"{where}: no assignment is named {cell['assignment']!r}; the course's are "
                                 f"{', '.join(assignment_ids())} (or leave the cell empty for every assignment)")
            extension = Extension(extension.due, extension.days, cell.get("assignment", ""))
            for key in {cell.get("student_id"), cell.get("lms_user_id")} - {"", None}:
                found.setdefault(key, []).append(extension)
    return found


@dataclass
class Lateness:
    """How late one submission was, and what it cost."""

    student: str
    assignment: str
    raw_score: float
    max_score: float
    penalty: float = 0.0
    submitted_at: datetime | None = None  # aware, in the due date's zone where there is one
    source: str = ""  # time_source: which evidence gave the time; "unknown"; "" if nothing was handed in
    due: datetime | None = None  # the due date in force for this student (extension included)
    extension: str = ""  # the extension, in words
    seconds_late: float | None = None  # None where the time or the due date is unknown
    units: int = 0
    per: str = "day"  # the unit counted
    rule: str = ""
    zone_assumed: bool = False  # the evidence gave no zone: read in the due date's
    lms_policy: bool = False  # the LMS applies its own policy (Canvas)
    marked_late: bool = False
    dated_after_stamp: datetime | None = None  # nbgrader: the notebook is dated later than its timestamp.txt

    @property
    def score(self) -> float:
        """The final score: raw score less the penalty."""
        return self.raw_score - self.penalty

    @property
    def unknown(self) -> bool:
        """Handed in, a due date set, and its time unknown: not penalised, listed."""
        return self.source == UNKNOWN

    @property
    def late_by_hours(self) -> float | str:
        """Hours after the due date (0 when on time; '' where unknown)."""
        if self.seconds_late is None:
            return ""
        return round(self.seconds_late / 3600, 2) if self.seconds_late > 0 else 0

    def columns(self) -> dict:
        """The late columns of grades.csv for this submission."""
        return {"raw_score": self.raw_score, "late_penalty": self.penalty,
                "submitted_at": self.submitted_at.isoformat() if self.submitted_at else "",
                "late_by": self.late_by_hours, "time_source": self.source + (
                    " (no time zone given: read in the due date's)" if self.zone_assumed else "")}

    def explain(self) -> str:
        """What was deducted and why, addressed to the student ('' when nothing was)."""
        if self.lms_policy:
            return ("Your LMS marked this submission late; its own late policy applies there, not here."
                    if self.marked_late else "")
        if self.due is None or self.seconds_late is None or self.seconds_late <= 0:
            return ""
        hours = self.seconds_late / 3600
        said = (f"Due {_shown(self.due)}{' (' + self.extension + ')' if self.extension else ''}; handed in "
                f"{_shown(self.submitted_at)}, {_duration(hours)} late (time from the {self.source}"
                f"{', no time zone given: read in the due date' + chr(39) + 's' if self.zone_assumed else ''}).")
        if self.penalty <= 0:
            return said + f" Within the rule ({self.rule}), nothing was deducted."
        return (said + f" Rule: {self.rule}. {self.units} started {self.per}{'' if self.units == 1 else 's'} late: "
                f"{self.penalty:g} of {self.max_score:g} points deducted, {self.raw_score:g} → {self.score:g}.")


def _shown(when: datetime | None) -> str:
    return when.isoformat(timespec="minutes") if when else "?"


def _duration(hours: float) -> str:
    return f"{hours:.1f} hours" if hours < 48 else f"{hours / 24:.1f} days ({hours:.0f} hours)"


def policy_from(config) -> tuple[LatePolicy, dict[str, list[Extension]]]:
    """The policy in force and its extensions; ValueError (before anything is graded) for a bad due date, rule or
    extensions file."""
    policy = LatePolicy(config=config)
    due = policy.due_date()
    policy.rule()
    if policy.extensions.strip() and due is None:
        raise ValueError("--extensions needs a due date (--due or c.LatePolicy.due)")
    if policy.extensions.strip() and not Path(policy.extensions).is_file():
        raise ValueError(f"extensions {policy.extensions} is not a file")
    extensions = read_extensions(Path(policy.extensions), due.tzinfo) if policy.extensions.strip() else {}
    if due is None and (policy.late_penalty.strip() or policy.penalty):
        log.warning("a late penalty is set (%s) but no due date (--due): no late penalty is applied",
                    policy.late_penalty.strip() or f"{policy.penalty:g}%/{policy.per}")
    return policy, extensions


def assess(rows: list[CellResult], times: dict[tuple[str, str], SubmissionTime], policy: LatePolicy,
           extensions: dict[str, list[Extension]] | None = None, lms_ids: dict[str, str] | None = None,
           worksheet: Path | None = None) -> dict[tuple[str, str], Lateness]:
    """The lateness and penalty of every (student, assignment) of `rows`, from the `times` the export gave (a Moodle
    grading `worksheet`'s ``Last modified (submission)`` where the export says no time)."""
    lms_ids, extensions = lms_ids or {}, extensions or {}
    due = policy.due_date()
    zone = due.tzinfo if due is not None else None
    worksheet_times = evidence.moodle_worksheet_times(worksheet) if worksheet is not None else {}
    found = {}
    for (student, assignment), total in submissions(rows).items():
        raw, max_score, handed_in = total.raw, total.max_score, total.handed_in
        late = Lateness(student, assignment, raw, max_score, rule=policy.describe() if due else "")
        found[(student, assignment)] = late
        if not handed_in:
            continue
        said = times.get((student, assignment), SubmissionTime())
        lms_id = lms_ids.get(student, "")
        if lms_id in worksheet_times and said.when is None:
            said = SubmissionTime(worksheet_times[lms_id], evidence.MOODLE) if worksheet_times[lms_id] else said
        late.lms_policy, late.marked_late = said.lms_policy, said.marked_late
        late.source = said.source
        late.dated_after_stamp = said.dated_after_stamp
        when = said.when
        if when is not None and when.tzinfo is None:
            late.zone_assumed = True
            when = when.replace(tzinfo=zone) if zone is not None else when.astimezone()
        late.submitted_at = when.astimezone(zone) if when is not None and zone is not None else when
        if said.lms_policy or due is None:
            continue
        if when is None:
            late.source = UNKNOWN
            continue
        # (By id: a row naming both of a student's ids is one extension. One for this assignment beats one for every
        # assignment; among those, the latest due date wins, whatever the file's order.)
        own = list({id(e): e for key in dict.fromkeys((student, lms_id)) if key for e in extensions.get(key, [])
                    if e.assignment in ("", assignment)}.values())
        own = [e for e in own if e.assignment == assignment] or own
        chosen = max(own, key=lambda e: e.applied(due).astimezone(UTC)) if own else None
        late.due = chosen.applied(due) if chosen else due
        late.extension = chosen.describe() if chosen else ""
        # (In UTC: Python subtracts two times of the same zone object by their wall clocks, DST ignored.)
        late.seconds_late = (when.astimezone(UTC) - late.due.astimezone(UTC)).total_seconds()
        late.units, late.per = policy.units_late(late.seconds_late), policy.rule()[1]
        late.penalty = policy.late_submission_penalty(student, raw, late.seconds_late, max_score)
    _warn(found, extensions, lms_ids, due)
    return found


def _warn(found: dict[tuple[str, str], Lateness], extensions: dict, lms_ids: dict, due: datetime | None) -> None:
    """Say on screen what the instructor must know: times unknown, zip dates used, extensions for nobody."""
    unknown = [lt for lt in found.values() if lt.unknown]
    if unknown:
        log.warning("TIME UNKNOWN, NOT PENALISED: the export says no submission time for %d submission(s): %s "
                    "(a zip's dates are no evidence; a Moodle export's times are in its grading worksheet: give it "
                    "with --gradebook)", len(unknown), ", ".join(f"{lt.student} ({lt.assignment})" for lt in unknown[:20])
                    + (", ..." if len(unknown) > 20 else ""))
    edited = [lt for lt in found.values() if lt.dated_after_stamp is not None]
    if edited:
        log.warning("NOTEBOOK DATED AFTER ITS TIMESTAMP (not penalised, listed in the report): %d submission(s) whose "
                    "notebook was modified after the time in its nbgrader timestamp.txt: %s", len(edited),
                    ", ".join(f"{lt.student} ({lt.assignment})" for lt in edited[:20]) + (", ..." if len(edited) > 20
                                                                                          else ""))
    canvas = [lt for lt in found.values() if lt.lms_policy]
    if canvas and due is not None:
        log.warning("Canvas applies its own late policy in its gradebook, so no late penalty is applied here; "
                    "%d submission(s) Canvas marked LATE are listed in the report", sum(lt.marked_late for lt in canvas))
    students = {lt.student for lt in found.values()}
    known = students | {lms_ids.get(s, "") for s in students}
    strangers = sorted(set(extensions) - known)
    if strangers:
        log.warning("extensions for id(s) not graded in this run: %s", ", ".join(strangers))


def summary(found: dict[tuple[str, str], Lateness]) -> str:
    """One line for the screen: how many were penalised, and how many times are unknown."""
    late = [lt for lt in found.values() if lt.penalty > 0]
    unknown = [lt for lt in found.values() if lt.unknown]
    return (f"late penalties: {len(late)} submission(s) penalised, {len(unknown)} whose time is unknown (not "
            f"penalised, listed in the report)")
