"""Reading an export as it came: a zip extracted safely (sizes, paths and links checked), its files walked, and the
one top folder an archive may wrap them in unwrapped. What cannot be read is an :class:`Unmatched` entry, never
dropped silently. :mod:`autograde.intake.collect` then matches the files to students and assignments.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from . import lms

log = logging.getLogger(__name__)


@dataclass
class Unmatched:
    """A file that was not graded, and why."""

    path: str
    reason: str


# The grader's marker, in every folder `python -m autograde grade` writes: such a folder is its output, never a
# submission (an --out folder inside the submissions folder is not a student).
OUTPUT_MARKER = ".autograde-output"


def is_junk(name: str) -> bool:
    return name.startswith(".") or name == "__MACOSX"


def is_ours(folder: Path) -> bool:
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


def too_big(size: int, limit_mib: int) -> str | None:
    """Why a file of `size` bytes is refused under the per-file limit, or None."""
    if size <= limit_mib * 2**20:
        return None
    return (f"refused: {_size(size)}, more than the limit of {limit_mib} MiB for one file "
            "(c.Collect.max_notebook_mib in autograde/nbgrader_config.py)")


def extract(source: Path, root: Path, limit_mib: int, file_limit_mib: int
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
            problem = _unsafe(member, name) or too_big(member.file_size, file_limit_mib)
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


def walk(root: Path) -> tuple[list[PurePosixPath], list[Unmatched]]:
    """The files under `root` (relative, hidden ones and __MACOSX left out), and the symbolic links refused."""
    files, refused = [], []
    for folder, dirs, names in os.walk(root):  # (does not follow links to folders)
        here = Path(folder)
        for d in [d for d in dirs if (here / d).is_symlink()]:
            refused.append(Unmatched(str((here / d).relative_to(root)), "refused: a symbolic link (not followed)"))
        dirs[:] = sorted(d for d in dirs if not is_junk(d) and not (here / d).is_symlink() and not is_ours(here / d))
        for name in sorted(names):
            rel = PurePosixPath((here / name).relative_to(root).as_posix())
            if is_junk(name):
                continue
            if (here / name).is_symlink():
                refused.append(Unmatched(str(rel), "refused: a symbolic link (not followed)"))
            else:
                files.append(rel)
    return files, refused


def unwrap(top: Path, assignments: list[str], pattern: str | None) -> Path:
    """The folder of `top` that holds the class: single wrapping folders (``export/``) are not students."""
    root = top
    while True:
        entries = [p for p in root.iterdir() if not is_junk(p.name) and not is_ours(p)]
        if len(entries) != 1 or not entries[0].is_dir():
            return root
        inner = entries[0]
        if lms.student_folder(inner.name) or any((inner / a / f"{a}.ipynb").is_file() for a in assignments):
            return root  # one student's folder, by an LMS's naming or nbgrader's layout
        kids = [p for p in inner.iterdir() if not is_junk(p.name)]
        folders = sum(1 for k in kids if k.is_dir())
        flat = [k.name for k in kids if k.is_file()]
        if any((inner / name).is_file() for name in lms.class_files()) or folders >= 2 or len(lms.flat_students(flat, pattern)) >= 2:
            log.info("read the export's top folder %r as a wrapper around the class, not as a student",
                     f"{inner.relative_to(top)}/")
            root = inner
        else:
            return root
