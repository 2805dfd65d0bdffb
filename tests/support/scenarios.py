"""Live grading scenarios whose outcome is kept between test runs while nothing they depend on changes.

Some slow tests run the real grading command in a situation made on purpose
(a starved core, a killed worker, a fork bomb, a config file changed) and
then check what it did. Such a scenario's outcome depends on the grader (its
code, templates, nbgrader_config.py and every installed package:
:func:`autograde.results.cache.grader_fingerprint`), on the course
(solutions/, exercises/) and on the test code that sets it up (its test
module and tests/support/). :func:`kept` runs a scenario once and keeps what
it observed, with the files it wrote, in ``.grading-cache/scenarios/<name>/``;
a rerun in which none of those changed checks the kept outcome again instead
of running it. A scenario one of whose tests failed is dropped
(conftest.py's ``pytest_runtest_makereport``), so a failure is never kept: the
next run tries again. On CI (``CI`` set, as ``.ci/run`` sets it) an outcome is replayed only within the run that
made it, never from an earlier one; ``rm -rf .grading-cache`` makes a run here do the same. Every run names the
scenarios it replayed from an earlier run in its summary (:func:`replayed`).
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from autograde.course import EXERCISES, REPO, SOLUTIONS
from autograde.results.cache import grader_fingerprint
from tests.support.testrun import VARIABLE

SCENARIOS = REPO / ".grading-cache" / "scenarios"
SUPPORT = Path(__file__).resolve().parent

T = TypeVar("T")

# Names of the scenarios a test used, since the test began (conftest.py drops them when the test fails).
USED: set[str] = set()


class Kept(dict):
    """A scenario's outcome given as a dict: what the test reads, by name (a dict takes no attribute; this does)."""


def scenario_key(module_file: str | Path) -> str:
    """A hash of everything a scenario's outcome depends on: the grader, the course, the test module
    `module_file` and tests/support/ (and where the repository is, since the outcome holds paths into it)."""
    h = hashlib.sha256(grader_fingerprint().encode() + str(REPO).encode())
    files = [Path(module_file)] + sorted(SUPPORT.glob("*.py"))
    for folder in (SOLUTIONS, EXERCISES):
        files += sorted(p for p in folder.rglob("*") if p.is_file())
    for path in files:
        h.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def kept(name: str, module_file: str | Path, make: Callable[[Path], T]) -> T:
    """The outcome of scenario `name`, set up by the test module `module_file`: ``make(folder)`` runs it in an empty
    `folder` (which it may fill with what its tests read later) and returns what it observed, picklable (a dict
    comes back as a :class:`Kept`). Kept from an earlier run with the same :func:`scenario_key`, or made now and
    kept. The outcome's ``kept_as`` is `name` (how conftest.py tells which scenario a failed test used)."""
    USED.add(name)
    home = SCENARIOS / name
    home.mkdir(parents=True, exist_ok=True)
    key = scenario_key(module_file)
    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # (two test runs on one checkout never run the same scenario at once)
        try:
            if (home / "key").read_text() == key:
                outcome = pickle.loads((home / "outcome.pickle").read_bytes())
                made_now = getattr(outcome, "made_in", None) == _this_run()
                if getattr(outcome, "kept_as", None) == name and (made_now or not os.environ.get("CI")):
                    if not made_now:
                        _note_replayed(name)
                    return outcome
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError):
            pass
        drop(name)
        folder = home / "run"
        folder.mkdir()
        outcome = make(folder)
        outcome = Kept(outcome) if type(outcome) is dict else outcome
        outcome.kept_as = name
        outcome.made_in = _this_run()
        partial = home / f"outcome.{os.getpid()}.part"
        partial.write_bytes(pickle.dumps(outcome))
        os.replace(partial, home / "outcome.pickle")
        (home / "key").write_text(key)  # (last: a scenario cut short is never taken for a kept one)
        return outcome


def _this_run() -> str:
    """This test run's name (its shared folder, :mod:`tests.support.testrun`), or "" outside a run."""
    return os.environ.get(VARIABLE, "")


def _note_replayed(name: str) -> None:
    if _this_run():
        with open(Path(_this_run()) / "replayed-scenarios", "a") as f:  # (one line per write: appends from workers)
            f.write(name + "\n")


def replayed() -> list[str]:
    """The scenarios this run replayed from an earlier one (any of its processes), sorted, each once."""
    try:
        return sorted(set((Path(_this_run()) / "replayed-scenarios").read_text().split()))
    except (OSError, TypeError):
        return []


def drop(name: str) -> None:
    """Forget scenario `name`'s outcome: the next run runs it again."""
    home = SCENARIOS / name
    for path in (home / "key", home / "outcome.pickle"):
        path.unlink(missing_ok=True)
    shutil.rmtree(home / "run", ignore_errors=True)
