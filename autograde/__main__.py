"""Command line: ``python -m autograde compile`` and ``python -m autograde grade``."""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from .course import assignment_ids
from .lms import LAYOUTS


def main(argv: list[str] | None = None) -> int:
    """Parse `argv` and run the chosen command; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m autograde", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    comp = commands.add_parser("compile", help="regenerate exercises/<a>/<a>.ipynb from solutions/<a>/<a>.py")
    comp.add_argument("assignments", nargs="*", help="assignment ids (default: all)")
    comp.add_argument("-v", "--verbose", action="store_true", help="say what is done, and why")

    grd = commands.add_parser("grade", help="autograde a folder of submissions into scores.csv and grades.csv")
    grd.add_argument("submissions", type=Path,
                     help="folder or zip: an LMS export (Canvas, Moodle, Blackboard, Google Classroom, Gradescope; "
                          "recognised by its file names), nbgrader's <student_id>/<assignment_id>/<assignment_id>.ipynb "
                          "layout, <student>/ folders or <student>_<anything>.ipynb files")
    grd.add_argument("--out", type=Path, required=True, help="output folder for scores.csv, grades.csv and nbgrader's work")
    grd.add_argument("--assignment", action="append", dest="assignments", help="grade only this assignment (repeatable)")
    grd.add_argument("--jobs", type=int, default=None, help="submissions graded at once (default: one per CPU core)")
    grd.add_argument("--scheduler", default=None,
                     help="address of a Dask distributed scheduler (e.g. tcp://10.0.0.5:8786): grade on its workers; "
                          "the workers need this repository's environment")
    # Limits default to autograde/nbgrader_config.py's settings; only what is typed here goes over them.
    grd.add_argument("--memory", type=int, default=None, metavar="MIB",
                     help="address-space limit of each notebook's kernel in MiB (c.SandboxKernelManager.memory_mib)")
    grd.add_argument("--timeout", type=int, default=None, help="time limit of one cell in seconds (c.Execute.timeout)")
    grd.add_argument("--processes", type=int, default=None, metavar="N",
                     help="processes (and threads) a kernel may start beyond its thread pools "
                          "(c.SandboxKernelManager.max_processes; 0: no limit)")
    grd.add_argument("--disk", type=int, default=None, metavar="MIB",
                     help="size of the folder a sandboxed kernel may write to, in MiB "
                          "(c.SandboxKernelManager.disk_mib; 0: no limit)")
    grd.add_argument("--roster", type=Path, help="CSV with a student_id column: the students to grade")
    grd.add_argument("--lms", choices=sorted(LAYOUTS), default=None,
                     help="read the export with this LMS's naming instead of recognising it")
    grd.add_argument("--student-pattern", default=None,
                     help="regular expression with a group 'student' that finds the student id in a flat file name "
                          "(for exports no layout recognises; default: the text before the first underscore)")
    grd.add_argument("--gradebook", type=Path, default=None, metavar="CSV",
                     help="a Canvas gradebook export or a Moodle grading worksheet: write a copy with the grades "
                          "filled in, ready to import, as OUT/gradebook-import.csv")
    grd.add_argument("--gradebook-column", default=None, metavar="TITLE",
                     help="the gradebook column to fill (default: the one whose title names the assignment)")
    grd.add_argument("--missing-grades", choices=["zero", "blank"], default=None,
                     help="what students in the gradebook who handed nothing in get (c.GradebookExport.missing)")
    grd.add_argument("--no-sandbox", action="store_true",
                     help="run student code without the bubblewrap sandbox (only where no sandbox can be had: "
                          "submissions could then read the solutions and other students' work and change grades)")
    grd.add_argument("--quiet", action="store_true", help="no progress bar")
    grd.add_argument("-v", "--verbose", action="store_true",
                     help="say what was collected, recognised, repaired, reused, retried, and why")

    args = parser.parse_args(argv)
    known = assignment_ids()
    chosen = getattr(args, "assignments", None) or known
    unknown = sorted(set(chosen) - set(known))
    if unknown:
        parser.error(f"unknown assignment(s): {', '.join(unknown)} (known: {', '.join(known)})")

    _log_to_stderr(args.verbose)
    if args.command == "compile":
        from .compile import compile_assignments, write_nbgrader_sources

        for path in compile_assignments(chosen) + write_nbgrader_sources(chosen):
            print(f"wrote {path}")
        return 0

    from . import gradebook
    from .grade import SandboxUnavailable, grade

    if not args.submissions.exists():
        parser.error(f"{args.submissions} does not exist")
    if args.roster is not None and not args.roster.is_file():
        parser.error(f"roster {args.roster} is not a file")
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.memory is not None and args.memory < 256:
        parser.error("--memory must be at least 256 MiB (the kernel itself needs that much)")
    if args.timeout is not None and args.timeout < 1:
        parser.error("--timeout must be at least 1 second")
    for name in ("processes", "disk"):
        if getattr(args, name) is not None and getattr(args, name) < 0:
            parser.error(f"--{name} must be 0 (no limit) or more")
    if args.gradebook is not None:
        if not args.gradebook.is_file():
            parser.error(f"gradebook {args.gradebook} is not a file")
        try:
            gradebook.kind_of(args.gradebook)  # before grading: a wrong file is found at once
        except ValueError as error:
            parser.error(str(error))
    try:
        result = grade(args.submissions, args.out, getattr(args, "assignments", None), progress=not args.quiet,
                     jobs=args.jobs, roster=args.roster, student_pattern=args.student_pattern, timeout=args.timeout,
                     scheduler=args.scheduler, memory_mib=args.memory, sandbox=False if args.no_sandbox else None,
                     processes=args.processes, disk_mib=args.disk, lms=args.lms)
    except (NotADirectoryError, ValueError) as error:
        parser.error(str(error))
    except SandboxUnavailable as error:
        print(f"python -m autograde grade: refusing to grade without a sandbox: {error}", file=sys.stderr)
        return 2
    print(f"{result.submissions} submission(s): {result.graded} graded now, {result.reused} unchanged since the last "
          f"run into this folder; {result.problems} test cell(s) with errors, timeouts, crashes, tampering or missing "
          "notebooks")
    print(f"wrote {args.out / 'scores.csv'}, {args.out / 'grades.csv'}, feedback in {args.out / 'feedback'} "
          f"and the report {args.out / 'report.html'}; "
          f"{len(result.unmatched)} file(s) not graded, listed in {args.out / 'unmatched.csv'}")
    if args.gradebook is not None:
        return _fill_gradebook(args)
    return 0


def _log_to_stderr(verbose: bool) -> None:
    """The package's log on stderr, as it happens: what it recognised and what went wrong with a worker; with
    `verbose`, also what it collected, repaired, reused and retried. Not nbgrader's chatter."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s" if not verbose else "%(levelname)s %(name)s: %(message)s"))
    ours = logging.getLogger("autograde")
    ours.setLevel(logging.DEBUG if verbose else logging.INFO)
    ours.addHandler(handler)
    ours.propagate = False


def _fill_gradebook(args) -> int:
    """Fill the instructor's gradebook export with the grades just written; print what was done."""
    from . import gradebook
    from .course import load_config

    missing = args.missing_grades or gradebook.GradebookExport(config=load_config()).missing
    try:
        filled = gradebook.fill(args.gradebook, args.out / "scores.csv", args.out, missing, args.gradebook_column,
                                getattr(args, "assignments", None))
    except ValueError as error:
        print(f"python -m autograde grade: the grades are written, but not into the gradebook: {error}", file=sys.stderr)
        return 2
    scaled = [f"{filled.columns[a]!r}" + (f" (scaled to its {filled.points[a]:g} points)" if filled.points[a] else "")
              for a in filled.columns]
    print("the gradebook copy changes only " + ", ".join(f"column {c!r} ({n} cell(s))" for c, n in filled.changed.items()))
    print(f"wrote {filled.path}, the {filled.kind} ready to import: {filled.filled} grade(s) in {', '.join(scaled)}; "
          f"{filled.missing} student(s) there with nothing handed in "
          + ("got 0" if missing == "zero" else "left as exported") + "; "
          f"{len(filled.absent)} student(s) graded but not in the gradebook"
          + (f", listed in {args.out / gradebook.ABSENT_FILE}: "
             + ", ".join(f"{s} ({lms_id or 'no LMS id'})" for s, lms_id, _ in filled.absent[:10]) if filled.absent else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
