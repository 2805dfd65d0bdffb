"""What the processes of one test run share: a folder, and values made once in it.

With pytest-xdist (`make test` runs the tests in several worker processes),
each worker has its own session fixtures. A fixture that grades or copies
the course anew every run would be made once per worker; through
:func:`once_per_run` it is made by the first process that asks and read by the
others. The controlling process (the only one without xdist) makes the
folder before the workers start and names it in the environment, which they
inherit; it removes it when the run ends.
"""
from __future__ import annotations

import fcntl
import os
import pickle
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

VARIABLE = "AUTOGRADE_TESTS_RUN"  # the environment variable naming the run's folder

T = TypeVar("T")


def start_run() -> bool:
    """Make the run's folder unless this process already has one (a worker's, or an outer run's when a test runs
    pytest in-process); True when this process made it and so removes it (:func:`end_run`)."""
    if os.environ.get(VARIABLE) and os.path.isdir(os.environ[VARIABLE]):
        return False
    os.environ[VARIABLE] = tempfile.mkdtemp(prefix="autograde-tests-")
    return True


def end_run() -> None:
    """Remove the run's folder (by the process that made it)."""
    folder = os.environ.pop(VARIABLE, "")
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


def run_folder() -> Path:
    """The folder every process of this test run shares."""
    return Path(os.environ[VARIABLE])


def once_per_run(name: str, make: Callable[[], T]) -> T:
    """``make()``'s value, made by the first process of the run that asks for `name` and kept (pickled) in the run's
    folder for the others, which wait for it. If `make` raises, nothing is kept: the next to ask tries again."""
    folder = run_folder()
    with open(folder / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        kept = folder / f"{name}.pickle"
        try:
            return pickle.loads(kept.read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError):  # (not made yet)
            pass
        value = make()
        partial = kept.with_suffix(f".{os.getpid()}.part")
        partial.write_bytes(pickle.dumps(value))
        os.replace(partial, kept)  # (whole or not at all: a process killed while writing leaves nothing half-made)
        return value

