"""The output folder: what in it is the grader's, and how one run's results replace the last run's in one step.

A run is written into a fresh folder inside the output folder (``.autograde-next-*``)
and shown at the end by flipping one link (:func:`swap_in`), so a run that
fails, or is killed while it swaps, leaves the last run's output as it was.
The grader replaces only what it wrote itself: folders that carry its marker
file and, in an output folder that carries the marker, the files it names.
"""
from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

from .intake.collect import OUTPUT_MARKER
from .pages import pdf as pdf_pages

log = logging.getLogger(__name__)

# The grader's marker: a file in every folder it made (and in the output folder), so that a rerun replaces only
# what the grader wrote, never an instructor's own folder of the same name (nbgrader's submitted/ and feedback/).
MARKER = OUTPUT_MARKER
OWN_FOLDERS = ("nbgrader", "submitted", "results", "feedback", pdf_pages.PDF_FOLDER)  # (the last: with --pdf)
OWN_FILES = ("scores.csv", "grades.csv", "notes.csv", "unmatched.csv", "report.html",
             "gradebook-import.csv", "not_in_gradebook.csv",  # (these two: written with --gradebook)
             pdf_pages.REPORT_PDF, pdf_pages.MOODLE_ZIP,  # (these two: with --pdf)
             "similarity.csv", "similarity.html")  # (these two: unless --no-similarity)
# A run is written into `.autograde-next-*`, renamed `.autograde-run-*` when done, and shown by flipping one link,
# `.autograde-current`, to it: each of the grader's entries in --out is a link through that one
# (`scores.csv -> .autograde-current/scores.csv`), so --out shows one run whole at every moment.
_NEXT, _RUN, _CURRENT = ".autograde-next-", ".autograde-run-", ".autograde-current"
_OLD = ".autograde-old-"  # (the scratch of earlier versions of the grader, removed as leftovers)


def fresh_run(out: Path) -> Path:
    """A new folder in `out` for a run to write into, marked as the grader's (shown by :func:`swap_in` when done)."""
    return mark(Path(tempfile.mkdtemp(prefix=_NEXT, dir=out)))


def not_ours(out: Path) -> list[str]:
    """What the grader would replace in `out` but did not write (no marker): it must not be replaced."""
    found = [f"{name}/" for name in OWN_FOLDERS if (out / name).exists() and not (out / name / MARKER).is_file()]
    if not (out / MARKER).is_file():
        found += [name for name in OWN_FILES if (out / name).exists()]
    return found


def mark(folder: Path) -> Path:
    """Make `folder` (if needed) and mark it as the grader's."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARKER).write_text("written by python -m autograde grade: replaced by its next run into this folder\n")
    return folder


def shown_run(out: Path) -> Path | None:
    """The run folder that `out`'s links show, if any."""
    try:
        target = os.readlink(out / _CURRENT)
    except OSError:
        return None
    return out / target if target.startswith(_RUN) and "/" not in target else None


def link(out: Path, name: str, target: str) -> None:
    """Make `out / name` a link to `target`, replacing what is there in one step."""
    if os.path.islink(out / name) and os.readlink(out / name) == target:
        return
    temporary = out / f"{_CURRENT}.tmp-{os.getpid()}-{name}"
    temporary.unlink(missing_ok=True)
    os.symlink(target, temporary)
    os.replace(temporary, out / name)


def ours_linked(out: Path, name: str) -> bool:
    return os.path.islink(out / name) and os.readlink(out / name) == f"{_CURRENT}/{name}"


def links_work(out: Path) -> bool:
    """Whether `out`'s file system takes symbolic links (a USB stick's vfat or a share without them does not)."""
    probe = out / f"{_CURRENT}.tmp-{os.getpid()}-probe"
    try:
        probe.unlink(missing_ok=True)
        os.symlink(".", probe)
        probe.unlink()
        return True
    except OSError:
        return False


def prepare(out: Path) -> None:
    """At a run's start: the scratch of killed runs removed, an earlier version's real entries adopted into the
    shown run, and the links a crash left unmade made, so that `out` shows its last run whole."""
    remove_leftovers(out)
    if links_work(out):
        adopt_unlinked(out)
        repair_links(out)


def adopt_unlinked(out: Path) -> None:
    """Take the grader's entries that are not links (an earlier version's layout, or a file written into `out`
    after its run, such as the gradebook import) into the shown run, each then shown through its link."""
    real = [name for name in OWN_FOLDERS + OWN_FILES if (out / name).exists() and not os.path.islink(out / name)]
    if not real:
        return
    run = shown_run(out) or mark(Path(tempfile.mkdtemp(prefix=_RUN, dir=out)))
    link(out, _CURRENT, run.name)
    for name in real:
        if (out / name).is_dir():  # (until its link is made it is hidden: a crash then is repaired at the next start)
            os.replace(out / name, run / name)
        else:  # a second name for the file first, so that it is never hidden
            (run / name).unlink(missing_ok=True)
            os.link(out / name, run / name)
        link(out, name, f"{_CURRENT}/{name}")


def repair_links(out: Path) -> None:
    """Make the link of each entry the shown run holds that `out` lacks (a crash between two steps left it unmade)."""
    shown = shown_run(out)
    for name in OWN_FOLDERS + OWN_FILES if shown is not None else ():
        if (shown / name).exists() and not os.path.lexists(out / name):
            link(out, name, f"{_CURRENT}/{name}")


def swap_in(fresh: Path, out: Path) -> None:
    """Show the run written into `fresh` in place of the last one: one link flipped (same file system: renames).

    Before the flip `out` shows the last run whole, after it the new one; the last run's folder is removed after.
    Where the file system takes no links, the entries are renamed one by one (:func:`swap_by_renames`).
    """
    if not links_work(out):
        log.warning("%s takes no symbolic links: the run's results are moved in one by one, so a crash in that "
                    "moment would leave a mix of two runs", out)
        swap_by_renames(fresh, out)
        return
    run = out / (_RUN + fresh.name[len(_NEXT):])
    os.chmod(fresh, out.stat().st_mode & 0o7777)  # (mkdtemp's 0700 would close the results to whom --out is open)
    os.rename(fresh, run)
    previous = shown_run(out)
    names = [name for name in OWN_FOLDERS + OWN_FILES if (run / name).exists()]
    for name in names:  # (a new name's link leads nowhere until the flip)
        link(out, name, f"{_CURRENT}/{name}")
    link(out, _CURRENT, run.name)  # the flip
    for name in OWN_FOLDERS + OWN_FILES:
        if name not in names and ours_linked(out, name):
            os.unlink(out / name)  # (it led nowhere since the flip)
    if previous is not None and previous != run:
        shutil.rmtree(previous)


def swap_by_renames(fresh: Path, out: Path) -> None:
    """Replace the grader's entries in `out` by those of `fresh`, each renamed (no links on this file system)."""
    old = mark(Path(tempfile.mkdtemp(prefix=_OLD, dir=out)))
    for name in OWN_FOLDERS + OWN_FILES:
        if os.path.lexists(out / name):
            os.replace(out / name, old / name)
    for entry in fresh.iterdir():
        os.replace(entry, out / entry.name)
    fresh.rmdir()
    shutil.rmtree(old)


def remove_leftovers(out: Path) -> None:
    """Scratch of a run that was killed before it could swap in or clean up (it carries the marker), never the run
    that `out` shows."""
    shown = shown_run(out)
    for folder in out.glob(".autograde-*"):
        if folder.name.startswith(f"{_CURRENT}.tmp-") and folder.is_symlink():
            folder.unlink()
        elif (folder.is_dir() and not folder.is_symlink() and folder.name.startswith((_NEXT, _RUN, _OLD))
              and folder != shown and (folder / MARKER).is_file()):
            shutil.rmtree(folder, ignore_errors=True)
