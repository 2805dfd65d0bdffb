"""Keep each submission's result between runs, keyed by everything its grade depends on.

Running the grader again into the same output folder reuses the result of
every submission for which nothing changed: the notebook's bytes, the
exercise's source and student notebook, the limits in effect and the grader itself (its code, its
templates, nbgrader_config.py and the versions it runs on). Results live in
``OUT/results/<student>/<assignment>.json``.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import logging
import sys
from dataclasses import asdict
from pathlib import Path

from ..course import EXERCISES, SOLUTIONS
from .classify import CellResult, Graded

log = logging.getLogger(__name__)

PACKAGE = Path(__file__).resolve().parent.parent  # the whole package, autograde/


def grader_fingerprint(package: Path = PACKAGE) -> str:
    """A hash of the grader: the code and templates in `package`, its settings (nbgrader_config.py, one of its
    files), the version of Python and :func:`installed_packages`."""
    return _fingerprint(Path(package).resolve())


@functools.cache
def _fingerprint(package: Path) -> str:
    h = hashlib.sha256(sys.version.encode())
    files = [p for p in package.rglob("*") if p.is_file() and p.suffix in (".py", ".j2")]  # (not __pycache__'s .pyc)
    for path in sorted(files):
        h.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    for line in installed_packages():
        h.update(line.encode() + b"\0")
    return h.hexdigest()


def installed_packages() -> list[str]:
    """``name==version`` of every package installed where the grader runs, sorted.

    A kernel runs in the grader's environment and can import any of them (the
    hidden tests import hypothesis, an answer may import scipy): a grade
    depends on all of their versions, not only on those of the grader's own tools.
    """
    return sorted({f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()})


def key_parts(notebook: Path, assignment: str, settings: dict, solutions: Path = SOLUTIONS,
              package: Path = PACKAGE, exercises: Path = EXERCISES) -> dict[str, str]:
    """A hash of each thing a submission's grade depends on, by name (to tell which one changed).

    The notebook, the exercise's source in `solutions` and its student notebook in `exercises` (against which a
    submission is rebuilt: its cells' ids and given cells), the effective limits
    (`settings`, as :func:`autograde.run.execute.grading_settings` gives them, so a
    default changed in nbgrader_config.py counts too) and the grader in `package`.
    """
    def sha(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    return {
        "notebook": sha(Path(notebook).read_bytes()),
        "assignment": sha((Path(solutions) / assignment / f"{assignment}.py").read_bytes()),
        "released": sha((Path(exercises) / assignment / f"{assignment}.ipynb").read_bytes()),
        "settings": sha(json.dumps(settings, sort_keys=True).encode()),
        "grader": grader_fingerprint(package),
    }


def result_key(notebook: Path, assignment: str, settings: dict, solutions: Path = SOLUTIONS,
               package: Path = PACKAGE, exercises: Path = EXERCISES) -> str:
    """A hash of everything a submission's grade depends on (see :func:`key_parts`)."""
    return hashlib.sha256(json.dumps(key_parts(notebook, assignment, settings, solutions, package, exercises),
                                     sort_keys=True).encode()).hexdigest()


def _path(out: Path, student: str, assignment: str) -> Path:
    return Path(out) / "results" / student / f"{assignment}.json"


def load_result(out: Path, student: str, assignment: str, parts: dict[str, str]) -> Graded | None:
    """What an earlier run saved for this submission, if it was graded with the same key `parts`; else None."""
    try:
        saved = json.loads(_path(out, student, assignment).read_text())
    except (OSError, ValueError):
        return None
    before = saved.get("parts") if isinstance(saved, dict) else None
    if before != parts:
        before = before if isinstance(before, dict) else {}
        changed = sorted(name for name in parts if before.get(name) != parts[name])
        log.debug("grading %s's %s again: %s changed since the last run", student, assignment, ", ".join(changed))
        return None
    try:
        return Graded([CellResult(**row) for row in saved["rows"]], saved.get("notes", []))
    except (KeyError, TypeError, ValueError):  # a result saved in another shape: grade again
        return None


def save_result(out: Path, student: str, assignment: str, parts: dict[str, str], graded: Graded) -> None:
    """Keep the rows and notes of one graded submission for later runs, under its key `parts`."""
    path = _path(out, student, assignment)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{**asdict(r), "status": str(r.status)} for r in graded.rows]
    path.write_text(json.dumps({"parts": parts, "rows": rows, "notes": graded.notes}))
