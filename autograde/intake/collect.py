"""Collect submissions as instructors get them into nbgrader's submitted layout.

Accepted inputs: an LMS export (Canvas, Moodle, Blackboard, Google Classroom,
Gradescope; see :mod:`autograde.intake.lms`), nbgrader's own layout
(``<student>/<assignment>/<assignment>.ipynb``), one folder per student or
``<student>_<anything>.ipynb`` files, as a folder or a zip file, also wrapped in
one top folder. File names such as ``Copy of 01-weighted-sum (1).ipynb`` are
recognised. Every file that cannot be matched to a student and an assignment is
reported, never silently dropped; the inputs are only read. A zip is extracted,
safely, into a scratch folder that is removed before :func:`collect` returns.
"""
from __future__ import annotations

import csv
import logging
import shutil
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo

from traitlets import Integer, Unicode, validate
from traitlets.config import Configurable

from . import blackboard, lms
from .adapter import match_assignment
from .archive import OUTPUT_MARKER, Unmatched, extract, is_junk, is_ours, too_big, unwrap, walk
from .lms import DEFAULT_STUDENT_PATTERN, clean_stem, spreadsheet_cell, unsafe_student_id
from .times import SubmissionTime, evidence

__all__ = ["DEFAULT_STUDENT_PATTERN", "OUTPUT_MARKER", "Collect", "Collected", "Unmatched", "clean_stem", "collect", "match_assignment",
           "write_unmatched"]

log = logging.getLogger(__name__)


class Collect(Configurable):
    """How exports are read (``c.Collect.<name>`` in nbgrader_config.py)."""

    max_unzipped_mib = Integer(4096, help="largest total size in MiB a zip of submissions may expand to; a larger "
                                          "one (a zip bomb) is refused before anything is extracted").tag(config=True)
    max_notebook_mib = Integer(50, help="largest size in MiB of one file of an export (a notebook is far smaller): "
                                        "a larger one is not extracted or copied, and is listed in unmatched.csv "
                                        "with the reason").tag(config=True)
    # (The one setting of an LMS's own: its meaning and its check are the adapter's.)
    blackboard_zone = Unicode("", help=blackboard.ZONE_HELP).tag(config=True)

    @validate("blackboard_zone")
    def _known_zone(self, proposal):
        return blackboard.known_zone(proposal["value"])

    def zone(self) -> ZoneInfo | None:
        """The Blackboard server's zone, or None."""
        return ZoneInfo(self.blackboard_zone) if self.blackboard_zone else None


@dataclass
class Collected:
    """What collect found: notebooks by (student, assignment), files left out, every student, and the LMS's say."""

    submissions: dict[tuple[str, str], Path]
    unmatched: list[Unmatched]
    students: list[str]
    layout: str = ""  # the title of the export layout recognised
    lms_ids: dict[str, str] = field(default_factory=dict)  # student id -> the LMS's own user id
    notes: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # what the LMS said (late)
    # When each collected notebook was handed in, as the export says (autograde.intake.times).
    times: dict[tuple[str, str], SubmissionTime] = field(default_factory=dict)
    lms: str = ""  # the name of the export layout recognised (autograde.intake.lms.LAYOUTS)
    names: dict[str, str] = field(default_factory=dict)  # student id -> the name the export gave (Moodle's full name)


def collect(source: Path, dest: Path, assignments: list[str], student_pattern: str | None = None,
            roster: Path | None = None, lms_name: str | None = None, settings: Collect | None = None) -> Collected:
    """Copy every recognised submission under `source` to ``dest/<student>/<a>/<a>.ipynb``.

    The export's layout is recognised (:func:`autograde.intake.lms.recognise`)
    unless `lms_name` forces one or `student_pattern` gives the regular
    expression that reads student ids from flat file names. The students are
    those of the roster if one is given (a roster CSV has a ``student_id``
    column; submissions of anyone else are reported, not graded), else everyone
    with a matched notebook or a folder of their own. Where a student has several
    notebooks for one assignment, the latest is graded (by the attempt the
    LMS's naming records, else by the file's date, in a zip the archive's) and
    the others are reported. Whose a file is comes from the LMS's own fields
    only (:mod:`autograde.intake.lms`); an LMS user id read under two student ids, and
    (in layouts whose names carry no user id) two notebooks under one name for
    one assignment, are never merged: none of them is graded, all are reported
    and logged as warnings.
    """
    source, dest = Path(source), Path(dest)
    settings = settings or Collect()
    dest.parent.mkdir(parents=True, exist_ok=True)
    # A fresh scratch folder each run, always removed: an earlier export never leaks into this run.
    with tempfile.TemporaryDirectory(prefix=".unzipped-", dir=dest.parent) as scratch:
        if source.is_file() and zipfile.is_zipfile(source):
            top = Path(scratch) / "export"
            refused, dates = extract(source, top, settings.max_unzipped_mib, settings.max_notebook_mib)
            top.mkdir(exist_ok=True)
        elif source.is_dir():
            top, refused, dates = source, [], None
        else:
            raise NotADirectoryError(f"{source} is neither a folder nor a zip file of submissions")
        return _collect(top, refused, dest, assignments, student_pattern, roster, lms_name, settings.max_notebook_mib,
                        dates, settings.zone())


def _collect(top: Path, refused: list[Unmatched], dest: Path, assignments: list[str], student_pattern: str | None,
             roster: Path | None, lms_name: str | None, file_limit_mib: int,
             dates: dict[str, tuple[int, ...]] | None = None, blackboard_zone: ZoneInfo | None = None) -> Collected:
    """Collect the export in `top`; `dates`: the archive's date of each file, by its path in the archive (None for
    a folder, whose files' modification times are their dates)."""
    root = unwrap(top, assignments, student_pattern)
    files, links = walk(root)
    layout, entries = lms.recognise(root, files, lms_name, student_pattern)
    log.info("recognised the export's layout: %s", layout.title)
    where = root.relative_to(top)
    entries, refused_ids, conflicts, renamed = _check_ids(entries, layout)
    candidates, folder_students, not_candidates = _candidates(
        files, entries, root, where, layout, assignments, file_limit_mib, dates, refused_ids, conflicts, renamed)
    roster_students, not_in_roster = _read_roster(roster)
    submissions, notes, times, not_latest = _copy_latest(
        candidates, layout, roster_students, root, where, dest, dates is not None, blackboard_zone)
    unmatched = refused + links + not_candidates + not_in_roster + not_latest
    return _assemble(layout, root, where, entries, renamed, roster_students, folder_students, unmatched, submissions,
                     notes, times)


# A candidate notebook of one (student, assignment): (its sort key, newest largest: (attempt, date, path)), its path
# in the export, its entry.
_Candidate = tuple[tuple, PurePosixPath, lms.Entry]


def _shown(where: Path, rel: PurePosixPath) -> str:
    """`rel` (a path under the class's folder) as unmatched.csv shows it: from where the export starts (`where`,
    the class's folder inside the export)."""
    return str(where / rel) if str(where) != "." else str(rel)


def _check_ids(entries: dict[PurePosixPath, list[lms.Entry]], layout: lms.Layout
               ) -> tuple[dict[PurePosixPath, list[lms.Entry]], dict[PurePosixPath, str], dict[PurePosixPath, str],
                          dict[tuple[str, str], str]]:
    """Check the student ids the layout read in `entries` (each file's entries, by its path).

    Returns the entries kept (unsafe ids and LMS user ids under several student ids taken out), why each file's
    ids were refused (an unsafe id), why each file's user ids conflict (one LMS user id under several student
    ids, also logged as a warning), and the student id each (student, LMS user id) is collected under: a name
    several LMS users share (two John Smiths) keeps each one's user id (``<student>-<user id>``).
    """
    entries = dict(entries)
    # One check of the student ids, whatever layout (or pattern) read them: an id names folders and files.
    refused_ids: dict[PurePosixPath, str] = {}
    for rel, found in entries.items():
        problems = [p for p in map(unsafe_student_id, (e.student for e in found)) if p]
        if problems:
            refused_ids[rel] = problems[0]
        entries[rel] = [e for e in found if not unsafe_student_id(e.student)]
    # One LMS user under two student ids (two names for one participant id): whose notebook each is cannot be told,
    # so none of that user's notebooks is graded, all are listed, and the screen says so. Never first-wins.
    shared = _shared_lms_ids(entries)
    conflicts: dict[PurePosixPath, str] = {}
    for rel, found in entries.items():
        clashing = sorted({e.lms_id for e in found if e.lms_id in shared})
        if clashing:
            conflicts[rel] = "; ".join(
                f"refused: {layout.title} user id {i!r} appears under {len(shared[i])} student ids "
                f"({', '.join(sorted(shared[i]))}), so whose notebook this is cannot be told; none of that user's "
                "notebooks is graded (check the export, rename or remove the wrong file, and rerun)" for i in clashing)
            entries[rel] = [e for e in found if e.lms_id not in shared]
    for lms_id, students in sorted(shared.items()):
        log.warning("NOT GRADED: %s user id %s appears under %d student ids (%s); none of their notebooks is graded, "
                    "see unmatched.csv", layout.title, lms_id, len(students), ", ".join(sorted(students)))
    lms_ids: dict[str, set[str]] = {}
    for found in entries.values():
        for e in found:
            lms_ids.setdefault(e.student, set()).update({e.lms_id} - {""})
    # One name, several LMS users (two John Smiths): each keeps their user id in their student id.
    renamed = {(e.student, e.lms_id): f"{e.student}-{e.lms_id}" if len(lms_ids[e.student]) > 1 and e.lms_id
               else e.student for found in entries.values() for e in found}
    return entries, refused_ids, conflicts, renamed


def _candidates(files: list[PurePosixPath], entries: dict[PurePosixPath, list[lms.Entry]], root: Path, where: Path,
                layout: lms.Layout, assignments: list[str], file_limit_mib: int,
                dates: dict[str, tuple[int, ...]] | None, refused_ids: dict[PurePosixPath, str],
                conflicts: dict[PurePosixPath, str], renamed: dict[tuple[str, str], str]
                ) -> tuple[dict[tuple[str, str], list[_Candidate]], set[str], list[Unmatched]]:
    """The candidate notebooks of each (student, assignment) among `files` (paths under `root`, the class's folder,
    with their checked `entries`, refused ids and conflicts from :func:`_check_ids`).

    Returns the candidates by (student id as renamed, assignment), each with the key that orders it (attempt, date:
    from `dates`, the archive's, else the file's modification time, path); the students whose files lie in
    folders; and the files that are not candidates, with why, in the order of `files`: not a notebook, a user id
    in conflict, an unsafe student id, no student id, too big (over `file_limit_mib`), no assignment named.
    """
    zipped = dates is not None
    candidates: dict[tuple[str, str], list[_Candidate]] = {}
    folder_students = set()
    unmatched: list[Unmatched] = []
    for rel in files:
        found = entries[rel]
        if len(rel.parts) > 1:
            folder_students.update(renamed[(e.student, e.lms_id)] for e in found)
        if rel.suffix.lower() != ".ipynb":
            unmatched.append(Unmatched(_shown(where, rel), "not a notebook (.ipynb)"))
            continue
        if rel in conflicts and not found:
            unmatched.append(Unmatched(_shown(where, rel), conflicts[rel]))
            continue
        if rel in refused_ids and not found:
            unmatched.append(Unmatched(_shown(where, rel), f"refused: {refused_ids[rel]}"))
            continue
        if not found:
            unmatched.append(Unmatched(_shown(where, rel), layout.unclaimed
                                       or f"no student id: the name does not follow {layout.title}'s naming"))
            continue
        oversized = too_big((root / rel).stat().st_size, file_limit_mib)
        if oversized:
            unmatched.append(Unmatched(_shown(where, rel), oversized))
            continue
        for e in found:
            assignment = match_assignment(e.file_name, assignments) or (
                match_assignment(e.context + ".ipynb", assignments) if e.context else None)
            if assignment is None:
                unmatched.append(Unmatched(_shown(where, rel),
                                           f"the file name names none (or several) of: {', '.join(assignments)}"))
                continue
            dated = dates.get(str(PurePosixPath(where.as_posix()) / rel), ()) if zipped else (root / rel).stat().st_mtime
            when = (e.attempt, dated, str(rel))
            candidates.setdefault((renamed[(e.student, e.lms_id)], assignment), []).append((when, rel, e))
    return candidates, folder_students, unmatched


def _read_roster(roster: Path | None) -> tuple[list[str], list[Unmatched]]:
    """The student ids of the roster CSV `roster` (its ``student_id`` column; [] for None), and its unsafe ids,
    refused. Raises ValueError for a roster without that column."""
    roster_students: list[str] = []
    unmatched: list[Unmatched] = []
    if roster is not None:
        with open(roster, newline="") as f:
            reader = csv.DictReader(f)
            if not reader.fieldnames or "student_id" not in reader.fieldnames:
                raise ValueError(f"{roster} needs a 'student_id' column")
            roster_students = [row["student_id"].strip() for row in reader if row["student_id"].strip()]
        for student in [s for s in roster_students if unsafe_student_id(s)]:
            unmatched.append(Unmatched(str(roster), f"refused: {unsafe_student_id(student)} (in the roster)"))
        roster_students = [s for s in roster_students if not unsafe_student_id(s)]
    return roster_students, unmatched


def _copy_latest(candidates: dict[tuple[str, str], list[_Candidate]], layout: lms.Layout, roster_students: list[str],
                 root: Path, where: Path, dest: Path, zipped: bool, blackboard_zone: ZoneInfo | None
                 ) -> tuple[dict[tuple[str, str], Path], dict[tuple[str, str], list[str]],
                            dict[tuple[str, str], SubmissionTime], list[Unmatched]]:
    """Copy the latest of the `candidates` of each (student, assignment) to ``dest/<student>/<a>/<a>.ipynb``.

    Returns the notebooks copied, by (student, assignment); the LMS's notes on them (late); when each was handed
    in; and the candidates not copied, with why: an older notebook, a student not in `roster_students` (if any),
    or, where the `layout`'s names carry no user id, several notebooks under one name (none copied, logged as a
    warning).
    """
    submissions: dict[tuple[str, str], Path] = {}
    notes: dict[tuple[str, str], list[str]] = {}
    times: dict[tuple[str, str], SubmissionTime] = {}
    unmatched: list[Unmatched] = []
    for (student, assignment), found in sorted(candidates.items()):
        found = sorted(found, key=lambda c: c[0], reverse=True)
        if layout.names_only and len(found) > 1:
            # (A name without a user id: these may be two students of the same name. Neither is graded as the other.)
            log.warning("NOT GRADED: %d notebooks for %s under the name %r; %s's names carry no user id, so they may "
                        "be two students of the same name; see unmatched.csv", len(found), assignment, student,
                        layout.title)
            for _, other, _ in found:
                unmatched.append(Unmatched(_shown(where, other), (
                    f"refused: {len(found)} notebooks for {assignment} under the same name {student!r} "
                    f"({', '.join(sorted(o.name for _, o, _ in found))}), and {layout.title}'s names carry no user id: "
                    "they may be two students of the same name, so none is graded. Rename the files so that each "
                    "student's name is their own (e.g. 'Jane Doe 2 - ...'), or remove a student's extra copy, and "
                    "rerun")))
            continue
        _, latest, entry = found[0]
        for _, other, _ in found[1:]:
            unmatched.append(Unmatched(_shown(where, other),
                                       f"another notebook of {student} for {assignment} is newer: {latest.name}"))
        if roster_students and student not in roster_students:
            unmatched.append(Unmatched(_shown(where, latest), f"student {student!r} is not in the roster"))
            continue
        target = dest / student / assignment / f"{assignment}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / latest, target)
        log.debug("collected %s as %s's %s%s", _shown(where, latest), student, assignment,
                  f" (the latest of {len(found)})" if len(found) > 1 else "")
        submissions[(student, assignment)] = target
        times[(student, assignment)] = evidence(layout.name, root, latest, entry, zipped, blackboard_zone)
        if entry.late:
            notes[(student, assignment)] = [f"{layout.title} marked this submission late"]
    return submissions, notes, times, unmatched


def _assemble(layout: lms.Layout, root: Path, where: Path, entries: dict[PurePosixPath, list[lms.Entry]],
              renamed: dict[tuple[str, str], str], roster_students: list[str], folder_students: set[str],
              unmatched: list[Unmatched], submissions: dict[tuple[str, str], Path],
              notes: dict[tuple[str, str], list[str]], times: dict[tuple[str, str], SubmissionTime]) -> Collected:
    """The Collected result of the steps above, with the files not graded logged and a summary.

    The students are the roster's if it gave any, else everyone with a notebook collected or a folder of their own
    (`folder_students`, and in a layout whose every folder is a student, every folder of `root`). A file a
    submission time was read from is dropped from `unmatched`: it was used.
    """
    if layout.folder_students:  # a student's folder counts even when it holds no notebook
        folder_students = folder_students | {p.name for p in root.iterdir() if p.is_dir() and not is_junk(p.name)
                                             and not unsafe_student_id(p.name) and not is_ours(p)}
    # A file the submission time was read from was used, not left ungraded: unmatched.csv lists only what was not.
    records = {_shown(where, PurePosixPath(t.record)) for t in times.values() if t.record}
    unmatched = [u for u in unmatched if u.path not in records]
    students = roster_students or sorted(folder_students | {student for student, _ in submissions})
    for u in unmatched:
        log.debug("not graded: %s: %s", u.path, u.reason)
    log.info("collected %d notebook(s) of %d student(s); %d file(s) not graded", len(submissions), len(students),
             len(unmatched))
    ids = {renamed[key]: key[1] for key in renamed if key[1]}
    names = {renamed[(e.student, e.lms_id)]: e.name for found in entries.values() for e in found if e.name}
    return Collected(submissions, unmatched, students, layout.title, ids, notes, times, layout.name, names)


def _shared_lms_ids(entries: dict[PurePosixPath, list[lms.Entry]]) -> dict[str, set[str]]:
    """The LMS user ids that the export's names give to more than one student id, with those student ids."""
    students: dict[str, set[str]] = {}
    for found in entries.values():
        for e in found:
            if e.lms_id:
                students.setdefault(e.lms_id, set()).add(e.student)
    return {i: s for i, s in students.items() if len(s) > 1}


def write_unmatched(unmatched: list[Unmatched], path: Path) -> None:
    """Write the files that were not graded, and why, as CSV (columns path, reason; no cell starts a formula)."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["path", "reason"])
        writer.writerows((spreadsheet_cell(u.path), spreadsheet_cell(u.reason)) for u in unmatched)
