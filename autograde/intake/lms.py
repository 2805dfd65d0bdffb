"""Recognise how a learning-management system named the files of a submissions export.

A layout reads, from the path of one file inside an export, whose file it is
(the student id every output uses and, where the system gives one, its own user
id), the name the student gave the file (which names the assignment), and how
late it was handed in, as far as the name tells. The naming schemes, as each
system writes them:

- Canvas, "Download Submissions": ``{name}_{LATE_}{user id}_{attachment id}_{file}``, where the name is the
  student's sortable name lower-cased with all but letters and digits removed, and a file uploaded again
  under the same name is renamed ``{file}-1``, ``{file}-2`` (canvas-lms ``ContentZipper``,
  ``Attachment.make_unique_filename``). Attachment ids grow with each upload.
- Moodle, "Download all submissions": a folder ``{Full Name}_{participant id}_assignsubmission_file_`` per
  student (or flat ``..._assignsubmission_file_{file}`` files), where the participant id is the one the
  grading worksheet shows as ``Participant {id}`` (mod/assign ``download_submissions``).
- Blackboard, Grade Center "Assignment File Download": ``{Assignment}_{username}_attempt_{YYYY-MM-DD-HH-MM-SS}_{file}``,
  beside a ``{Assignment}_{username}_attempt_{date}.txt`` receipt per attempt.
- Google Classroom / Drive: the copy Classroom makes for each student, ``{Student Name} - {file}``, with
  Drive's ``Copy of`` and `` (1)`` where a name repeats.
- Gradescope, "Export Submissions": a folder ``submission_{id}`` per submission and
  ``submission_metadata.yml``, which names each one's ``:submitters:`` (``:name:``, ``:sid:``, ``:email:``)
  and its ``:created_at:``.
- nbgrader's own submitted layout, ``{student}/{assignment}/{assignment}.ipynb``.
- Folders: one folder per student, or ``{student}_{anything}`` files (``--student-pattern``).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# The student id of a flat file, when nothing else says: the text before the first underscore.
DEFAULT_STUDENT_PATTERN = r"^(?P<student>[^_/]+)_"


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
class Layout:
    """One naming scheme: its name for ``--lms``, its title in messages, and how it reads an export."""

    name: str
    title: str
    reader: Callable[[Path, str], Reader]  # (the export's folder, the student pattern) -> reader
    # Its names carry no user id and a student id is a display name: two notebooks under one name may be two
    # people of the same name, so they are never merged by date.
    names_only: bool = False


_NOISE = re.compile(r"^copy of |\s*\(\d+\)$|-checkpoint$|\s+copy$", re.IGNORECASE)


def clean_stem(name: str) -> str:
    """A notebook's file name without extension and without 'Copy of', '(1)', '-checkpoint', in lower case."""
    stem = PurePosixPath(name).stem.strip()
    previous = None
    while previous != stem:
        previous, stem = stem, _NOISE.sub("", stem).strip()
    return stem.lower()


def unsafe_student_id(student: str) -> str | None:
    """Why `student` cannot be a student id, or None.

    A student id names a folder (``submitted/<student>/``, ``results/<student>/``)
    and a file (``feedback/<student>.html``), whatever layout it was read from:
    it must be one plain path component (not '.', '..', nothing hidden, no
    separator, no control character) of a length every file system takes.
    """
    if not student.strip():
        return "an empty student id"
    if student in (".", "..") or student.startswith("."):
        return f"the student id {student!r} is not a folder name of its own (it starts with '.')"
    if re.search(r"[/\\\x00-\x1f\x7f]", student):
        return f"the student id {student!r} holds a path separator or a control character"
    if len(student.encode()) > 200:
        return f"the student id {student[:40]!r}... is longer than 200 bytes"
    return None


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as the start of a formula


def spreadsheet_cell(value):
    """`value` as a CSV cell no spreadsheet runs as a formula: text that starts like one gets a leading "'"
    (OWASP, CSV injection). Numbers stay numbers."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def read_cell(text: str) -> str:
    """A cell that :func:`spreadsheet_cell` wrote, as it was before."""
    return text[1:] if text.startswith("'") and text[1:].startswith(FORMULA_START) else text


def safe_id(text: str) -> str:
    """`text` (a person's name) as a student id: runs of anything but letters, digits, '.' and '-' become '-'."""
    return re.sub(r"[^\w.-]+|_+", "-", text.strip()).strip("-")


# Canvas's name holds no '_' and (lower-cased letters and digits) is never all digits nor "LATE": so the user and
# attachment ids are always the first two numbers, even where no name comes first (an anonymous export).
_CANVAS = re.compile(r"^(?:(?!LATE_)(?P<name>[^_]*[^_\d][^_]*)_)?(?:(?P<late>LATE)_)?(?P<user>\d+|anon_[^_]+)_(?P<attachment>\d+)_(?P<file>.+)$")
_REUPLOAD = re.compile(r"-(\d+)$")


def _canvas(root: Path, pattern: str) -> Reader:
    def read(rel: PurePosixPath) -> list[Entry]:
        found = _CANVAS.match(rel.name) if len(rel.parts) == 1 else None
        if not found:
            return []
        user = found["user"]
        again = _REUPLOAD.search(PurePosixPath(found["file"]).stem)
        return [Entry(found["name"] or user, user if user.isdigit() else "", found["file"],
                      attempt=(int(found["attachment"]), int(again[1]) if again else 0), late=bool(found["late"]))]
    return read


# The name the student gave a file comes last and may hold anything, the system's own separators included: each
# pattern reads the system's fields from the left, up to their first complete run (non-greedy), never from the
# student's part (red team, issue 19: a file named "x_222_assignsubmission_file_..." was read as participant 222's).
_MOODLE = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_[a-z]+_(?P<file>.*)$")
# A student's folder ends with the system's fields, so there they are read from the right: the full name before them
# (which a student may be able to edit in their profile) cannot take another participant's id.
_MOODLE_FOLDER = re.compile(r"^(?P<name>.+)_(?P<id>\d+)_assignsubmission_[a-z]+_$")


def _moodle(root: Path, pattern: str) -> Reader:
    def read(rel: PurePosixPath) -> list[Entry]:
        if len(rel.parts) > 1:
            found = _MOODLE_FOLDER.match(rel.parts[0])
            return [Entry(safe_id(found["name"]), found["id"], rel.name, name=found["name"])] if found else []
        found = _MOODLE.match(rel.name)
        if not found or not found["file"]:  # (a flat file has a name after the fields; a folder ends with '_')
            return []
        return [Entry(safe_id(found["name"]), found["id"], found["file"], name=found["name"])]
    return read


_BLACKBOARD = re.compile(r"^(?P<assignment>.+?)_(?P<user>[^_]+)_attempt_(?P<date>\d{4}(?:-\d\d){5})(?:_(?P<file>.+)|\.txt)$")


def _blackboard(root: Path, pattern: str) -> Reader:
    def read(rel: PurePosixPath) -> list[Entry]:
        found = _BLACKBOARD.match(rel.name) if len(rel.parts) == 1 else None
        if not found:
            return []
        return [Entry(found["user"], found["user"], found["file"] or rel.name, found["assignment"],
                      attempt=(found["date"],))]
    return read


_CLASSROOM = re.compile(r"^(?P<name>.+?) - (?P<file>.+)$")


def _classroom(root: Path, pattern: str) -> Reader:
    def read(rel: PurePosixPath) -> list[Entry]:
        found = _CLASSROOM.match(rel.name) if len(rel.parts) == 1 else None
        return [Entry(safe_id(found["name"]), "", found["file"])] if found else []
    return read


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


def _nbgrader(root: Path, pattern: str) -> Reader:
    def read(rel: PurePosixPath) -> list[Entry]:
        # (A notebook renamed by Colab, Drive or Jupyter, "Copy of <a> (1).ipynb", is still <a>.ipynb.)
        if len(rel.parts) != 3 or (rel.suffix == ".ipynb" and clean_stem(rel.name) != rel.parts[1].lower()):
            return []
        return [Entry(rel.parts[0], "", rel.name, rel.parts[1])]
    return read


def _folders(root: Path, pattern: str) -> Reader:
    compiled = re.compile(pattern)

    def read(rel: PurePosixPath) -> list[Entry]:
        if len(rel.parts) >= 2:
            return [Entry(rel.parts[0], "", rel.name)]
        found = compiled.search(rel.name)
        student = found.group("student") if found else None
        return [Entry(student, "", rel.name)] if student else []
    return read


# In the order they are tried: the most specific naming first.
LAYOUTS = {layout.name: layout for layout in [
    Layout("gradescope", "Gradescope", _gradescope),
    Layout("nbgrader", "nbgrader", _nbgrader),
    Layout("moodle", "Moodle", _moodle),
    Layout("blackboard", "Blackboard", _blackboard),
    Layout("canvas", "Canvas", _canvas),
    Layout("classroom", "Google Classroom", _classroom, names_only=True),
    Layout("folders", "one folder (or name prefix) per student", _folders),
]}


def recognise(root: Path, files: list[PurePosixPath], forced: str | None = None,
              pattern: str | None = None) -> tuple[Layout, dict[PurePosixPath, list[Entry]]]:
    """The layout of the export in `root` whose files `files` are, and each file's entries under it.

    `forced` names a layout (``--lms``); `pattern`, a regular expression with
    a group ``student`` (``--student-pattern``), chooses the folders layout
    with it. Otherwise the first specific layout that claims at least half of
    the notebooks wins, else the folders layout if it claims any. Raises
    ValueError, with the first names and what to pass, if no layout claims a
    notebook.
    """
    notebooks = [f for f in files if f.suffix.lower() == ".ipynb"]
    if forced is not None or pattern is not None:
        layout = LAYOUTS[forced or "folders"]
        return layout, _read_all(layout, root, files, pattern or DEFAULT_STUDENT_PATTERN)
    for layout in LAYOUTS.values():
        entries = _read_all(layout, root, files, DEFAULT_STUDENT_PATTERN)
        claimed = sum(1 for f in notebooks if entries[f])
        if claimed and (layout.name == "folders" or 2 * claimed >= len(notebooks)):
            return layout, entries
    if not notebooks:
        layout = LAYOUTS["folders"]
        return layout, _read_all(layout, root, files, DEFAULT_STUDENT_PATTERN)
    shown = ", ".join(str(f) for f in notebooks[:5]) + (", ..." if len(notebooks) > 5 else "")
    raise ValueError(
        f"cannot tell whose notebooks these are: none of the {len(notebooks)} notebook(s) follows a known export "
        f"layout ({', '.join(layout.title for layout in LAYOUTS.values())}). The first are: {shown}. "
        f"Pass --lms NAME ({', '.join(LAYOUTS)}) if the export comes from one of these, or --student-pattern REGEX "
        "with a group named 'student' that finds the student id in a file name, e.g. "
        "--student-pattern '^(?P<student>[^-]+)-' for files named <student>-<anything>.ipynb.")


def _read_all(layout: Layout, root: Path, files: list[PurePosixPath], pattern: str) -> dict[PurePosixPath, list[Entry]]:
    read = layout.reader(root, pattern)
    return {f: read(f) for f in files}


def student_folder(name: str) -> bool:
    """Whether a folder with this name is, by an LMS's naming, one student's (Moodle) or one submission's (Gradescope)."""
    return bool(_MOODLE_FOLDER.match(name)) or bool(re.fullmatch(r"submission_\d+", name))


def flat_students(names: list[str], pattern: str | None = None) -> set[str]:
    """The students that flat files with these names belong to, by any layout's naming (for finding wrappers)."""
    found = set()
    for layout in LAYOUTS.values():
        if layout.name not in ("gradescope", "nbgrader"):  # (their students are folders)
            read = layout.reader(Path("."), pattern or DEFAULT_STUDENT_PATTERN)
            found |= {e.student for name in names for e in read(PurePosixPath(name))}
    return found
