"""The output folder changes from one run's results to the next's in one step (`output_folder.swap_in`).

A crash at any moment of the swap (a kill, a full disk) leaves `--out` showing the last run's results whole or the
new run's whole, never a mix, and the next run's clean-up never deletes the results `--out` shows.
"""
import os
import shutil
from pathlib import Path

from autograde import output_folder

OLD_RUN = {"scores.csv": "old", "report.html": "old", "feedback": "old"}
NEW_RUN = {"scores.csv": "new", "report.html": "new", "feedback": "new", "similarity.csv": "new"}  # (one more)


class Crash(Exception):
    """The process dies here."""


def write_run(out: Path, entries: dict[str, str]) -> Path:
    """A finished run's folder in `out`, as `grade` writes one: files, and folders holding a page."""
    fresh = output_folder.fresh_run(out)
    for name, text in entries.items():
        if "." in name:
            (fresh / name).write_text(text)
        else:
            (output_folder.mark(fresh / name) / "alice.html").write_text(text)
    return fresh


def shown(out: Path) -> dict[str, str]:
    """What an instructor reading `out` sees of the grader's entries."""
    seen = {}
    for name in output_folder.OWN_FOLDERS + output_folder.OWN_FILES:
        path = out / name
        if path.is_file():
            seen[name] = path.read_text()
        elif path.is_dir():
            seen[name] = (path / "alice.html").read_text()
    return seen


def crashing(monkeypatch, at: int) -> list[int]:
    """Make the `at`-th change to the file system (0-based) raise Crash; the count so far is returned."""
    count = [0]

    def wrap(function):
        def changed(*args, **kwargs):
            if count[0] == at:
                raise Crash(f"killed at change {at}")
            count[0] += 1
            return function(*args, **kwargs)
        return changed

    for module, name in ((os, "replace"), (os, "rename"), (os, "symlink"), (os, "unlink"), (os, "rmdir"),
                         (shutil, "rmtree"), (shutil, "move")):
        monkeypatch.setattr(module, name, wrap(getattr(module, name)))
    return count


def test_a_swap_shows_the_new_run_whole_and_a_rerun_of_it_too(tmp_path):
    out = output_folder.mark(tmp_path / "out")
    out.chmod(0o755)  # (open to other users, as a course's shared folder may be: the results must be as open)
    output_folder.swap_in(write_run(out, OLD_RUN), out)
    assert shown(out) == OLD_RUN
    output_folder.swap_in(write_run(out, NEW_RUN), out)
    assert shown(out) == NEW_RUN
    assert (out / output_folder._CURRENT).resolve().stat().st_mode & 0o777 == 0o755, "the run's folder is closed to others"
    output_folder.swap_in(write_run(out, OLD_RUN), out)  # (similarity.csv is not in this run: it must not be shown)
    assert shown(out) == OLD_RUN
    output_folder.remove_leftovers(out)
    assert shown(out) == OLD_RUN
    runs = [p for p in out.iterdir() if p.is_dir() and not p.is_symlink() and p.name.startswith(".autograde-")]
    assert len(runs) <= 1, f"an earlier run's folder is left in --out: {runs}"


def test_a_crash_anywhere_in_the_swap_shows_one_run_whole_and_the_next_run_keeps_it(tmp_path, monkeypatch):
    at = 0
    while True:  # (crash at the first change to the file system, then the second, ... until the swap finishes)
        out = output_folder.mark(tmp_path / f"out-{at}")
        output_folder.swap_in(write_run(out, OLD_RUN), out)
        fresh = write_run(out, NEW_RUN)
        crashing(monkeypatch, at)
        try:
            output_folder.swap_in(fresh, out)
        except Crash:
            finished = False
        else:
            finished = True
        monkeypatch.undo()
        seen = shown(out)
        if finished:
            assert seen == NEW_RUN
            break
        assert seen in (OLD_RUN, NEW_RUN), f"killed at change {at} of the swap, --out shows a mix of two runs: {seen}"
        output_folder.remove_leftovers(out)  # (what the next run does first)
        assert shown(out) == seen, (f"killed at change {at} of the swap, the next run's clean-up changed what --out "
                                    f"showed: {shown(out)} against {seen}")
        at += 1
    assert at >= 3, f"the swap finished after {at} changes: the crashes tried too few moments"


def old_layout(out: Path, entries: dict[str, str]) -> None:
    """`out` as an earlier version of the grader left it: the run's entries themselves in it, no links."""
    for name, text in entries.items():
        if "." in name:
            (out / name).write_text(text)
        else:
            (output_folder.mark(out / name) / "alice.html").write_text(text)


def test_an_earlier_versions_output_is_adopted_and_a_crash_in_it_is_repaired_at_the_next_start(tmp_path,
                                                                                              monkeypatch):
    at = 0
    while True:
        out = output_folder.mark(tmp_path / f"out-{at}")
        old_layout(out, OLD_RUN)
        crashing(monkeypatch, at)
        try:
            output_folder.prepare(out)
            finished = True
        except Crash:
            finished = False
        monkeypatch.undo()
        output_folder.prepare(out)  # (the next run's start)
        assert shown(out) == OLD_RUN, f"killed at change {at} of the adoption, the next start shows {shown(out)}"
        if finished:
            break
        at += 1
    assert at >= 3, f"the adoption finished after {at} changes: the crashes tried too few moments"
    output_folder.swap_in(write_run(out, NEW_RUN), out)
    assert shown(out) == NEW_RUN


def test_where_the_file_system_takes_no_links_the_run_is_moved_in(tmp_path, monkeypatch):
    # (A USB stick's vfat, a share without links: the swap falls back to renames instead of losing the run.)
    def refused(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "symlink", refused)
    out = output_folder.mark(tmp_path / "out")
    output_folder.prepare(out)
    output_folder.swap_in(write_run(out, OLD_RUN), out)
    assert shown(out) == OLD_RUN
    output_folder.prepare(out)
    output_folder.swap_in(write_run(out, NEW_RUN), out)
    assert shown(out) == NEW_RUN
    assert not [p.name for p in out.iterdir() if p.name.startswith(".autograde-") and p.is_dir()]
