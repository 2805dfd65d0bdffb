"""Helpers for tests that run the real grading command, ``python -m autograde grade``: as a subprocess, or its
``main()`` in this process where a subprocess would prove nothing more."""
from __future__ import annotations

import contextlib
import csv
import io
import logging
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from autograde.course import REPO


def grade_command(submissions: Path, out: Path, *options: str, cwd: Path = REPO,
                  timeout: int = 900) -> subprocess.CompletedProcess:
    """Run ``python -m autograde grade SUBMISSIONS --out OUT --quiet OPTIONS`` from `cwd`; stdout and stderr as text."""
    return subprocess.run([sys.executable, "-m", "autograde", "grade", str(submissions), "--out", str(out), "--quiet",
                           *options], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def run_main(*argv: str) -> tuple[int, str, str]:
    """Run ``python -m autograde ARGV``'s ``main()`` in this process: its exit status, stdout and stderr.

    The command sends the package's log to stderr (a handler on the ``autograde`` logger, which stops propagating):
    that is undone afterwards, so later tests' `caplog` still sees the package's records.
    """
    from autograde.__main__ import main

    logger = logging.getLogger("autograde")
    saved = list(logger.handlers), logger.level, logger.propagate
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(list(argv))
            except SystemExit as stop:  # (traitlets ends so after its help or a value of the wrong type)
                status = stop.code
    finally:
        logger.handlers[:] = saved[0]
        logger.setLevel(saved[1])
        logger.propagate = saved[2]
    return status, out.getvalue(), err.getvalue()


def read_rows(path: Path) -> list[dict]:
    """The rows of a CSV file, as dicts."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def grades_by_student(out: Path) -> dict[str, dict]:
    """grades.csv of a grading run, by student id (one assignment per run)."""
    return {r["student_id"]: r for r in read_rows(out / "grades.csv")}


def write_zip(path: Path, files: dict[str, str | bytes], dates: dict[str, tuple] | None = None) -> Path:
    """A zip at `path` with `files` (name -> content) in the given order, dated by `dates` (name -> date_time)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(zipfile.ZipInfo(name, (dates or {}).get(name, (2024, 1, 1, 12, 0, 0))), content)
    return path


def repo_copy(dest: Path) -> Path:
    """A copy of what grading reads from the repository (the grader, its settings, the exercises), to change freely."""
    for folder in ("autograde", "solutions", "exercises"):
        shutil.copytree(REPO / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__", "source", "submitted",
                                                                                  "autograded", "feedback", "*.db"))
    return dest
