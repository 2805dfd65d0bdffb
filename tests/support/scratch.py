"""Kernels' scratch folders (``ag-<worker pid>-*``) of a grading run: watched while it runs, checked after.

A test run gives the grader a scratch base of its own (``--scratch DIR``) and
checks only that folder, never the system's shared temporary folder, where
other gradings on the machine keep theirs.
"""
from __future__ import annotations

import threading
from pathlib import Path

PATTERN = "ag-*"


def scratch_left(base: Path) -> list[str]:
    """The kernels' scratch folders still in `base` (none should be, once a grading run has ended)."""
    return sorted(str(p) for p in Path(base).glob(PATTERN))


class ScratchWatch:
    """Every scratch folder that appears in any of `folders` while the ``with`` block runs (looked for every
    `interval` seconds): ``seen[folder]`` is a set of names."""

    def __init__(self, *folders: Path, interval: float = 0.05):
        self.folders = [Path(f) for f in folders]
        self.seen: dict[Path, set[str]] = {f: set() for f in self.folders}
        self._before = {f: {p.name for p in f.glob(PATTERN)} for f in self.folders}
        self._interval, self._stop = interval, threading.Event()
        self._thread = threading.Thread(target=self._watch, name="scratch-watch", daemon=True)

    def _watch(self) -> None:
        while not self._stop.is_set():
            for folder in self.folders:
                self.seen[folder] |= {p.name for p in folder.glob(PATTERN)} - self._before[folder]
            self._stop.wait(self._interval)

    def __enter__(self) -> ScratchWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def worker_pid(name: str) -> int | None:
    """The pid of the grading process that made scratch folder `name` (``ag-<pid>-<random>``); None for a folder
    named otherwise (the sandbox check's, ``ag-check-*``)."""
    part = name.split("-")[1] if name.count("-") >= 2 else ""
    return int(part) if part.isdigit() else None
