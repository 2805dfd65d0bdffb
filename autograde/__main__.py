"""Command line: ``python -m autograde compile`` and ``python -m autograde grade``."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .course import assignment_ids


def main(argv: list[str] | None = None) -> int:
    """Parse `argv` and run the chosen command; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m autograde", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    comp = commands.add_parser("compile", help="regenerate exercises/<a>/<a>.ipynb from solutions/<a>/<a>.py")
    comp.add_argument("assignments", nargs="*", help="assignment ids (default: all)")

    grd = commands.add_parser("grade", help="autograde a folder of submissions into scores.csv and grades.csv")
    grd.add_argument("submissions", type=Path,
                     help="folder or zip: nbgrader's <student_id>/<assignment_id>/<assignment_id>.ipynb layout, "
                          "or an LMS export (<student>_<anything>.ipynb files or <student>/ folders)")
    grd.add_argument("--out", type=Path, required=True, help="output folder for scores.csv, grades.csv and nbgrader's work")
    grd.add_argument("--assignment", action="append", dest="assignments", help="grade only this assignment (repeatable)")
    grd.add_argument("--jobs", type=int, default=None, help="submissions graded at once (default: one per CPU core)")
    grd.add_argument("--scheduler", default=None,
                     help="address of a Dask distributed scheduler (e.g. tcp://10.0.0.5:8786): grade on its workers; "
                          "the workers need this repository's environment")
    grd.add_argument("--memory", type=int, default=None, metavar="MIB",
                     help="address-space limit of each notebook's kernel in MiB (default 4096)")
    grd.add_argument("--timeout", type=int, default=None, help="time limit of one cell in seconds (default 60)")
    grd.add_argument("--roster", type=Path, help="CSV with a student_id column: the students to grade")
    grd.add_argument("--student-pattern", default=None,
                     help="regular expression with a group 'student' that finds the student id in a flat file name "
                          "(default: the text before the first underscore)")
    grd.add_argument("--no-sandbox", action="store_true",
                     help="run student code without the bubblewrap sandbox (only where no sandbox can be had: "
                          "submissions could then read the solutions and other students' work and change grades)")
    grd.add_argument("--quiet", action="store_true", help="no progress bar")

    args = parser.parse_args(argv)
    known = assignment_ids()
    chosen = getattr(args, "assignments", None) or known
    unknown = sorted(set(chosen) - set(known))
    if unknown:
        parser.error(f"unknown assignment(s): {', '.join(unknown)} (known: {', '.join(known)})")

    if args.command == "compile":
        from .compile import compile_assignments, write_nbgrader_sources

        for path in compile_assignments(chosen) + write_nbgrader_sources(chosen):
            print(f"wrote {path}")
        return 0

    from .grade import SandboxUnavailable, grade

    if not args.submissions.exists():
        parser.error(f"{args.submissions} does not exist")
    if args.roster is not None and not args.roster.is_file():
        parser.error(f"roster {args.roster} is not a file")
    from .collect import DEFAULT_STUDENT_PATTERN
    from .grade import DEFAULT_MEMORY_MIB
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.memory is not None and args.memory < 256:
        parser.error("--memory must be at least 256 MiB (the kernel itself needs that much)")
    if args.timeout is not None and args.timeout < 1:
        parser.error("--timeout must be at least 1 second")
    try:
        rows = grade(args.submissions, args.out, getattr(args, "assignments", None), progress=not args.quiet,
                     jobs=args.jobs, roster=args.roster, student_pattern=args.student_pattern or DEFAULT_STUDENT_PATTERN,
                     timeout=args.timeout, scheduler=args.scheduler,
                     memory_mib=args.memory or DEFAULT_MEMORY_MIB, sandbox=not args.no_sandbox)
    except (NotADirectoryError, ValueError) as error:
        parser.error(str(error))
    except SandboxUnavailable as error:
        print(f"python -m autograde grade: refusing to grade without a sandbox: {error}", file=sys.stderr)
        return 2
    submissions = {(r.student_id, r.assignment) for r in rows}
    problems = sum(r.status in ("error", "timeout", "missing", "crashed", "tampering") for r in rows)
    run = grade.last_run
    print(f"{len(submissions)} submission(s): {run['graded']} graded now, {run['reused']} unchanged since the last run "
          f"into this folder; {problems} test cell(s) with errors, timeouts, crashes, tampering or missing notebooks")
    unmatched = sum(1 for _ in open(args.out / "unmatched.csv")) - 1
    print(f"wrote {args.out / 'scores.csv'}, {args.out / 'grades.csv'}, feedback in {args.out / 'feedback'} "
          f"and the report {args.out / 'report.html'}; "
          f"{unmatched} file(s) not graded, listed in {args.out / 'unmatched.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
