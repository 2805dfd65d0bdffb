"""What an adapter for one export layout (one learning-management system's, or nbgrader's, or plain folders) provides.

Each layout lives in a module of its own (:mod:`.canvas`, :mod:`.moodle`, :mod:`.blackboard`, :mod:`.classroom`,
:mod:`.gradescope_export`, :mod:`.nbgrader_layout`, :mod:`.folders`) that builds one :class:`Layout`; the registry,
:mod:`.lms`, lists them. The generic steps (collect, the submission times, the gradebook, the feedback PDFs) call
only the hooks below, so a new system is one new module and its line in the registry.

This module holds the protocol and the few helpers every adapter shares; it imports no adapter.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo


@dataclass(frozen=True)
class Entry:
    """What an export's naming says about one of its files."""

    student: str
    lms_id: str = ""  # the system's own user id, where its names carry one
    file_name: str = ""  # the name the student gave the file
    context: str = ""  # more text that may name the assignment (Blackboard's assignment name)
    attempt: tuple = ()  # larger is handed in later; () where the name says nothing
    late: bool = False  # the system marked it late
    name: str = ""  # the student's name as the export wrote it (Moodle's full name), where it differs from the id


Reader = Callable[[PurePosixPath], list[Entry]]  # a file's path inside the export -> its entries ([]: not ours)


@dataclass(frozen=True)
class SubmissionTime:
    """When one submission was handed in, and which evidence says so."""

    when: datetime | None = None  # aware; naive where the evidence names no zone; None: unknown
    source: str = ""  # which evidence gave it (a constant of the adapter that read it)
    lms_policy: bool = False  # the LMS applies its own late policy (Canvas): no penalty here
    marked_late: bool = False  # the LMS marked it late (Canvas's LATE)
    record: str = ""  # the export's file the time was read from (relative to it), if a file of its own gave it
    # nbgrader's timestamp.txt sits in the student's own folder: the notebook beside it dated later than the stamp
    # (by more than STAMP_SLACK) is flagged for the instructor, not penalised (a copy without dates would make every
    # notebook look later). Its date, aware, where it is.
    dated_after_stamp: datetime | None = None


# (root of the export, the file's path in it, its entry, whether the export was a zip, the Blackboard server's zone)
# -> when it was handed in, or None where the export says nothing.
Times = Callable[[Path, PurePosixPath, Entry, bool, ZoneInfo | None], SubmissionTime | None]


@dataclass
class Grade:
    """One student's grade for one assignment, from scores.csv."""

    student: str
    lms_id: str
    score: float
    max_score: float
    handed_in: bool


@dataclass
class Filled:
    """What filling a gradebook did, for the summary."""

    path: Path
    kind: str  # "Canvas gradebook" or "Moodle grading worksheet"
    columns: dict[str, str]  # assignment -> the gradebook column filled
    points: dict[str, float | None]  # assignment -> the points the gradebook gives it (None: as graded)
    filled: int = 0
    missing: int = 0
    changed: dict[str, int] = field(default_factory=dict)  # gradebook column -> cells whose value changed
    absent: list[tuple[str, str, str]] = field(default_factory=list)  # (student, lms user id, assignment)
    # Grades whose LMS user id more than one student id claims: filled nowhere (student, lms user id, assignment).
    conflicts: list[tuple[str, str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Gradebook:
    """A gradebook file an LMS exports and imports back, as :mod:`autograde.gradebook` fills it."""

    kind: str  # its name, as :func:`autograde.gradebook.kind_of` returns it
    description: str  # what it looks like, for the message that a file is no known gradebook
    recognises: Callable[[list[str]], bool]  # its header (stripped cells) -> whether it is this gradebook
    # (rows, header, grades by assignment and student, the `missing` setting, the column asked for) -> what was filled;
    # writes the grades into `rows` in place.
    fill: Callable[[list[list[str]], list[str], dict[str, dict[str, Grade]], str, str | None], Filled]


@dataclass(frozen=True)
class FeedbackUpload:
    """A zip of the students' feedback PDFs that an LMS's bulk feedback upload reads, beside the PDFs."""

    file: str  # the zip's name in the output folder
    # (student id -> PDF, student id -> LMS user id, student id -> name the export gave) ->
    # {path inside the zip: PDF} and the students left out (no user id the LMS can match)
    members: Callable[[dict[str, Path], dict[str, str], dict[str, str]], tuple[dict[str, Path], list[str]]]
    left_out: str  # the warning for students left out, with %s for the zip's name, the students, the PDFs' folder


@dataclass(frozen=True)
class Layout:
    """One naming scheme: its name for ``--lms``, its title in messages, how it reads an export, and its hooks."""

    name: str
    title: str
    reader: Callable[[Path, str], Reader]  # (the export's folder, the student pattern) -> reader
    # Its names carry no user id and a student id is a display name: two notebooks under one name may be two
    # people of the same name, so they are never merged by date.
    names_only: bool = False
    times: Times | None = None  # when a file was handed in, as the export says
    student_folder: Callable[[str], bool] | None = None  # a folder of this name is one student's (or submission's)
    class_file: str = ""  # a file that marks the folder holding it as the whole class's (not a wrapper's)
    flat: bool = True  # its students' files may lie flat in the export (False: they are always folders)
    folder_students: bool = False  # every folder of the export is a student, even one that holds no notebook
    unclaimed: str = ""  # why a notebook it reads no student from is not graded ("": it breaks the naming)
    gradebook: Gradebook | None = None  # the gradebook it exports (a Canvas gradebook, a Moodle worksheet)
    feedback: FeedbackUpload | None = None  # its bulk feedback upload


def safe_id(text: str) -> str:
    """`text` (a person's name) as a student id: runs of anything but letters, digits, '.' and '-' become '-'."""
    return re.sub(r"[^\w.-]+|_+", "-", text.strip()).strip("-")


_NOISE = re.compile(r"^copy of |\s*\(\d+\)$|-checkpoint$|\s+copy$", re.IGNORECASE)


def clean_stem(name: str) -> str:
    """A notebook's file name without extension and without 'Copy of', '(1)', '-checkpoint', in lower case."""
    stem = PurePosixPath(name).stem.strip()
    previous = None
    while previous != stem:
        previous, stem = stem, _NOISE.sub("", stem).strip()
    return stem.lower()


def match_assignment(name: str, assignments: list[str]) -> str | None:
    """The assignment whose id (or whose number, like '01') the file name names, if exactly one."""
    stem = clean_stem(name)
    hits = [a for a in assignments if a.lower() in stem]
    if len(hits) != 1:
        number_hits = [a for a in assignments if re.search(rf"(^|[^0-9]){re.escape(a.split('-')[0])}([^0-9]|$)", stem)]
        hits = hits or number_hits
    return hits[0] if len(hits) == 1 else None
