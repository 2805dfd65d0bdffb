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
import os
import re
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo

from traitlets import Integer, Unicode, validate
from traitlets.config import Configurable

from . import blackboard, lms
from .adapter import match_assignment
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
class Unmatched:
    """A file that was not graded, and why."""

    path: str
    reason: str


# The grader's marker, in every folder `python -m autograde grade` writes: such a folder is its output, never a
# submission (an --out folder inside the submissions folder is not a student).
OUTPUT_MARKER = ".autograde-output"


def _junk(name: str) -> bool:
    return name.startswith(".") or name == "__MACOSX"


def _ours(folder: Path) -> bool:
    return (folder / OUTPUT_MARKER).is_file() and not folder.is_symlink()


def _unsafe(member: zipfile.ZipInfo, name: str) -> str | None:
    """Why an archive member must not be extracted, or None."""
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return "refused: an absolute path in the archive"
    if ".." in PurePosixPath(name).parts:
        return "refused: a path in the archive that climbs out of it (..)"
    if stat.S_ISLNK(member.external_attr >> 16):
        return "refused: a symbolic link in the archive"
    return None


def _size(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def _too_big(size: int, limit_mib: int) -> str | None:
    """Why a file of `size` bytes is refused under the per-file limit, or None."""
    if size <= limit_mib * 2**20:
        return None
    return (f"refused: {_size(size)}, more than the limit of {limit_mib} MiB for one file "
            "(c.Collect.max_notebook_mib in autograde/nbgrader_config.py)")


def _extract(source: Path, root: Path, limit_mib: int, file_limit_mib: int
             ) -> tuple[list[Unmatched], dict[str, tuple[int, ...]]]:
    """Extract the zip `source` into `root`; return the members refused, and the date the archive records for each
    file extracted (``ZipInfo.date_time``, by its path in the archive). Raises ValueError for a zip bomb.

    A member whose recorded size is over `file_limit_mib` is refused without
    being extracted; the whole archive is refused if its recorded sizes add up
    to more than `limit_mib`.

    The dates are carried as the archive writes them (a wall-clock time, no zone), so that "newest" means newest
    in the archive, not last extracted; never through the file's modification time, which local time makes
    ambiguous in the hour daylight saving time repeats.
    """
    refused, dates = [], {}
    with zipfile.ZipFile(source) as archive:
        members = [m for m in archive.infolist() if not m.is_dir()]
        # zipfile never yields more than a member's recorded size, so the recorded sizes bound what is written.
        total = sum(m.file_size for m in members)
        room = shutil.disk_usage(root.parent).free
        if total > limit_mib * 2**20 or total > room:
            largest = max(members, key=lambda m: m.file_size)
            raise ValueError(
                f"refusing to extract {source}: its {len(members)} file(s) would take {_size(total)} "
                f"(the largest, {largest.filename}, {_size(largest.file_size)} from {_size(largest.compress_size)}), "
                + (f"more than the limit of {_size(limit_mib * 2**20)} (c.Collect.max_unzipped_mib in "
                   "autograde/nbgrader_config.py)" if total > limit_mib * 2**20 else
                   f"more than the {_size(room)} free on the disk") + ". An export of notebooks is far smaller: "
                "this looks like a zip bomb. If the archive is genuine, raise the limit or extract it yourself.")
        root.mkdir(parents=True, exist_ok=True)
        for member in members:
            name = member.filename.replace("\\", "/")  # some Windows tools write backslashes
            problem = _unsafe(member, name) or _too_big(member.file_size, file_limit_mib)
            target = root / name
            if problem is None and not target.resolve().is_relative_to(root.resolve()):
                problem = "refused: a path that leads out of the archive's folder"
            if problem is not None:
                refused.append(Unmatched(name, problem))
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with archive.open(member) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            except (zipfile.BadZipFile, RuntimeError, OSError, EOFError) as e:  # damaged, encrypted, unreadable
                target.unlink(missing_ok=True)
                refused.append(Unmatched(name, f"could not be extracted: {e}"))
                continue
            dates[str(PurePosixPath(name))] = tuple(member.date_time)
    return refused, dates


def _walk(root: Path) -> tuple[list[PurePosixPath], list[Unmatched]]:
    """The files under `root` (relative, hidden ones and __MACOSX left out), and the symbolic links refused."""
    files, refused = [], []
    for folder, dirs, names in os.walk(root):  # (does not follow links to folders)
        here = Path(folder)
        for d in [d for d in dirs if (here / d).is_symlink()]:
            refused.append(Unmatched(str((here / d).relative_to(root)), "refused: a symbolic link (not followed)"))
        dirs[:] = sorted(d for d in dirs if not _junk(d) and not (here / d).is_symlink() and not _ours(here / d))
        for name in sorted(names):
            rel = PurePosixPath((here / name).relative_to(root).as_posix())
            if _junk(name):
                continue
            if (here / name).is_symlink():
                refused.append(Unmatched(str(rel), "refused: a symbolic link (not followed)"))
            else:
                files.append(rel)
    return files, refused


def _unwrap(top: Path, assignments: list[str], pattern: str | None) -> Path:
    """The folder of `top` that holds the class: single wrapping folders (``export/``) are not students."""
    root = top
    while True:
        entries = [p for p in root.iterdir() if not _junk(p.name) and not _ours(p)]
        if len(entries) != 1 or not entries[0].is_dir():
            return root
        inner = entries[0]
        if lms.student_folder(inner.name) or any((inner / a / f"{a}.ipynb").is_file() for a in assignments):
            return root  # one student's folder, by an LMS's naming or nbgrader's layout
        kids = [p for p in inner.iterdir() if not _junk(p.name)]
        folders = sum(1 for k in kids if k.is_dir())
        flat = [k.name for k in kids if k.is_file()]
        if any((inner / name).is_file() for name in lms.class_files()) or folders >= 2 or len(lms.flat_students(flat, pattern)) >= 2:
            log.info("read the export's top folder %r as a wrapper around the class, not as a student",
                     f"{inner.relative_to(top)}/")
            root = inner
        else:
            return root


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
            refused, dates = _extract(source, top, settings.max_unzipped_mib, settings.max_notebook_mib)
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
    zipped = dates is not None
    root = _unwrap(top, assignments, student_pattern)
    files, links = _walk(root)
    unmatched = refused + links
    layout, entries = lms.recognise(root, files, lms_name, student_pattern)
    log.info("recognised the export's layout: %s", layout.title)
    where = root.relative_to(top)

    def shown(rel: PurePosixPath) -> str:  # paths in unmatched.csv start where the export does
        return str(where / rel) if str(where) != "." else str(rel)

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

    candidates: dict[tuple[str, str], list[tuple[tuple, PurePosixPath, lms.Entry]]] = {}
    folder_students = set()
    for rel in files:
        found = entries[rel]
        if len(rel.parts) > 1:
            folder_students.update(renamed[(e.student, e.lms_id)] for e in found)
        if rel.suffix.lower() != ".ipynb":
            unmatched.append(Unmatched(shown(rel), "not a notebook (.ipynb)"))
            continue
        if rel in conflicts and not found:
            unmatched.append(Unmatched(shown(rel), conflicts[rel]))
            continue
        if rel in refused_ids and not found:
            unmatched.append(Unmatched(shown(rel), f"refused: {refused_ids[rel]}"))
            continue
        if not found:
            unmatched.append(Unmatched(shown(rel), layout.unclaimed
                                       or f"no student id: the name does not follow {layout.title}'s naming"))
            continue
        too_big = _too_big((root / rel).stat().st_size, file_limit_mib)
        if too_big:
            unmatched.append(Unmatched(shown(rel), too_big))
            continue
        for e in found:
            assignment = match_assignment(e.file_name, assignments) or (
                match_assignment(e.context + ".ipynb", assignments) if e.context else None)
            if assignment is None:
                unmatched.append(Unmatched(shown(rel),
                                           f"the file name names none (or several) of: {', '.join(assignments)}"))
                continue
            dated = dates.get(str(PurePosixPath(where.as_posix()) / rel), ()) if zipped else (root / rel).stat().st_mtime
            when = (e.attempt, dated, str(rel))
            candidates.setdefault((renamed[(e.student, e.lms_id)], assignment), []).append((when, rel, e))

    roster_students: list[str] = []
    if roster is not None:
        with open(roster, newline="") as f:
            reader = csv.DictReader(f)
            if not reader.fieldnames or "student_id" not in reader.fieldnames:
                raise ValueError(f"{roster} needs a 'student_id' column")
            roster_students = [row["student_id"].strip() for row in reader if row["student_id"].strip()]
        for student in [s for s in roster_students if unsafe_student_id(s)]:
            unmatched.append(Unmatched(str(roster), f"refused: {unsafe_student_id(student)} (in the roster)"))
        roster_students = [s for s in roster_students if not unsafe_student_id(s)]

    submissions: dict[tuple[str, str], Path] = {}
    notes: dict[tuple[str, str], list[str]] = {}
    times: dict[tuple[str, str], SubmissionTime] = {}
    for (student, assignment), found in sorted(candidates.items()):
        found = sorted(found, key=lambda c: c[0], reverse=True)
        if layout.names_only and len(found) > 1:
            # (A name without a user id: these may be two students of the same name. Neither is graded as the other.)
            log.warning("NOT GRADED: %d notebooks for %s under the name %r; %s's names carry no user id, so they may "
                        "be two students of the same name; see unmatched.csv", len(found), assignment, student,
                        layout.title)
            for _, other, _ in found:
                unmatched.append(Unmatched(shown(other), (
                    f"refused: {len(found)} notebooks for {assignment} under the same name {student!r} "
                    f"({', '.join(sorted(o.name for _, o, _ in found))}), and {layout.title}'s names carry no user id: "
                    "they may be two students of the same name, so none is graded. Rename the files so that each "
                    "student's name is their own (e.g. 'Jane Doe 2 - ...'), or remove a student's extra copy, and "
                    "rerun")))
            continue
        _, latest, entry = found[0]
        for _, other, _ in found[1:]:
            unmatched.append(Unmatched(shown(other),
                                       f"another notebook of {student} for {assignment} is newer: {latest.name}"))
        if roster_students and student not in roster_students:
            unmatched.append(Unmatched(shown(latest), f"student {student!r} is not in the roster"))
            continue
        target = dest / student / assignment / f"{assignment}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / latest, target)
        log.debug("collected %s as %s's %s%s", shown(latest), student, assignment,
                  f" (the latest of {len(found)})" if len(found) > 1 else "")
        submissions[(student, assignment)] = target
        times[(student, assignment)] = evidence(layout.name, root, latest, entry, zipped, blackboard_zone)
        if entry.late:
            notes[(student, assignment)] = [f"{layout.title} marked this submission late"]
    if layout.folder_students:  # a student's folder counts even when it holds no notebook
        folder_students |= {p.name for p in root.iterdir()
                            if p.is_dir() and not _junk(p.name) and not unsafe_student_id(p.name) and not _ours(p)}
    # A file the submission time was read from was used, not left ungraded: unmatched.csv lists only what was not.
    records = {shown(PurePosixPath(t.record)) for t in times.values() if t.record}
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
