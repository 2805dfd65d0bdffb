"""Collect submissions as instructors get them into nbgrader's submitted layout.

Accepted inputs: nbgrader's own layout (``<student>/<assignment>/<assignment>.ipynb``),
an LMS export (``<student>_<anything>.ipynb`` files, or ``<student>/<file>.ipynb``
folders), as a folder or a zip file. File names such as ``Copy of
01-weighted-sum (1).ipynb`` are recognised. Every file that cannot be matched to
a student and an assignment is reported, never silently dropped; the inputs are
only read.
"""
from __future__ import annotations

import csv
import re
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# The student id of a flat LMS file is what precedes the first underscore.
DEFAULT_STUDENT_PATTERN = r"^(?P<student>[^_/]+)_"
_NOISE = re.compile(r"^copy of |\s*\(\d+\)$|-checkpoint$|\s+copy$", re.IGNORECASE)


@dataclass
class Unmatched:
    """A file that was not graded, and why."""

    path: str
    reason: str


def clean_stem(name: str) -> str:
    """A notebook's file name without extension and without 'Copy of', '(1)', '-checkpoint'."""
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


def _files(source: Path, scratch: Path) -> tuple[Path, list[Path]]:
    """The folder to read and the files in it; a zip is extracted into `scratch` first, safely."""
    if source.is_file() and zipfile.is_zipfile(source):
        root = scratch / "unzipped"
        with zipfile.ZipFile(source) as archive:
            for member in archive.infolist():
                target = (root / member.filename).resolve()
                if not str(target).startswith(str(root.resolve())) or member.is_dir():
                    continue  # never write outside the scratch folder
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
        source = root
    if not source.is_dir():
        raise NotADirectoryError(f"{source} is neither a folder nor a zip file of submissions")
    files = sorted(p for p in source.rglob("*") if p.is_file() and not any(part.startswith(".") or part == "__MACOSX"
                                                                               for part in p.relative_to(source).parts))
    return source, files


@dataclass
class Collected:
    """What collect found: notebooks by (student, assignment), files left out, and every student."""

    submissions: dict[tuple[str, str], Path]
    unmatched: list[Unmatched]
    students: list[str]


def collect(source: Path, dest: Path, assignments: list[str], student_pattern: str = DEFAULT_STUDENT_PATTERN,
            roster: Path | None = None) -> Collected:
    """Copy every recognised submission under `source` to ``dest/<student>/<a>/<a>.ipynb``.

    The students are those of the roster if one is given (a roster CSV has a
    ``student_id`` column; submissions of anyone else are reported, not
    graded), else everyone with a matched notebook or a top-level folder. Where
    a student has several notebooks for one assignment, the most recently
    modified one is graded and the others are reported.
    """
    source, dest = Path(source), Path(dest)
    pattern = re.compile(student_pattern)
    root, files = _files(source, dest.parent / f".{dest.name}-scratch")
    folders = {p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name != "__MACOSX"}
    candidates: dict[tuple[str, str], list[Path]] = {}
    unmatched: list[Unmatched] = []
    for path in files:
        rel = path.relative_to(root)
        parts = rel.parts
        if path.suffix.lower() != ".ipynb":
            unmatched.append(Unmatched(str(rel), "not a notebook (.ipynb)"))
            continue
        if len(parts) == 3 and parts[1] in assignments and parts[2] == f"{parts[1]}.ipynb":
            student, assignment = parts[0], parts[1]  # nbgrader's submitted layout
        else:
            if len(parts) >= 2:
                student = parts[0]
            else:
                found = pattern.search(parts[0])
                student = found.group("student") if found else None
            if not student:
                unmatched.append(Unmatched(str(rel), "no student id in the path or file name"))
                continue
            assignment = match_assignment(parts[-1], assignments)
            if assignment is None:
                unmatched.append(Unmatched(str(rel), f"the file name names none (or several) of: {', '.join(assignments)}"))
                continue
        candidates.setdefault((student, assignment), []).append(path)

    roster_students: list[str] = []
    if roster is not None:
        with open(roster, newline="") as f:
            reader = csv.DictReader(f)
            if not reader.fieldnames or "student_id" not in reader.fieldnames:
                raise ValueError(f"{roster} needs a 'student_id' column")
            roster_students = [row["student_id"].strip() for row in reader if row["student_id"].strip()]

    submissions: dict[tuple[str, str], Path] = {}
    for (student, assignment), paths in sorted(candidates.items()):
        paths = sorted(paths, key=lambda p: (p.stat().st_mtime, str(p)), reverse=True)
        for extra in paths[1:]:
            unmatched.append(Unmatched(str(extra.relative_to(root)),
                                       f"another notebook of {student} for {assignment} is newer: {paths[0].name}"))
        if roster_students and student not in roster_students:
            unmatched.append(Unmatched(str(paths[0].relative_to(root)), f"student {student!r} is not in the roster"))
            continue
        target = dest / student / assignment / f"{assignment}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(paths[0], target)
        submissions[(student, assignment)] = target
    students = roster_students or sorted(folders | {student for student, _ in submissions})
    return Collected(submissions, unmatched, students)


def write_unmatched(unmatched: list[Unmatched], path: Path) -> None:
    """Write the files that were not graded, and why, as CSV (columns path, reason)."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["path", "reason"])
        writer.writerows((u.path, u.reason) for u in unmatched)
