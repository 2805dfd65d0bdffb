"""Command line: ``python -m autograde compile``, ``python -m autograde grade`` and ``python -m autograde gradescope``.

``grade`` is a traitlets :class:`~traitlets.config.Application`: its settings
are read from ``autograde/nbgrader_config.py`` and then from the command line,
so what is typed always wins. Each option sets one setting of the class that
uses it (``--timeout`` sets ``GuardedExecute.timeout``, ``--memory``
``SandboxKernelManager.memory_mib``, ...), any setting can be typed as
``--Class.name=value``, and ``--help-all`` lists them all.
"""
from __future__ import annotations

import argparse
import logging
import re
import sys
from pathlib import Path

from traitlets import Bool, Enum, HasTraits, Integer, List, TraitError, Unicode
from traitlets.config import Application, Config, Configurable

from .startup import skip_unused_imports

skip_unused_imports()  # (the program's first step, before the imports below bring in nbformat)

from .course import assignment_ids, load_config  # noqa: E402
from .intake.lms import LAYOUTS  # noqa: E402

PROG = "python -m autograde"
# The settings each option of `grade` sets, in the class that uses it.
KERNEL_OPTIONS = {"memory": "memory_mib", "processes": "max_processes", "disk": "disk_mib"}


def main(argv: list[str] | None = None) -> int:
    """Parse `argv` and run the chosen command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["grade"]:
        return _grade(argv[1:])
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    comp = commands.add_parser("compile", help="regenerate exercises/<a>/<a>.ipynb from solutions/<a>/<a>.py")
    comp.add_argument("assignments", nargs="*", help="assignment ids (default: all)")
    comp.add_argument("-v", "--verbose", action="store_true", help="say what is done, and why")
    commands.add_parser("grade", help="autograde a folder of submissions into scores.csv and grades.csv "
                                      f"(see {PROG} grade --help, and --help-all for every setting)")
    gradescope = commands.add_parser("gradescope", help="write the Gradescope autograder zip of one assignment "
                                                        "(its run grades a submission as `grade` does)")
    gradescope.add_argument("assignment", help="the assignment id")
    gradescope.add_argument("--out", default="autograder.zip", help="the zip to write (default: autograder.zip)")
    gradescope.add_argument("--late-penalty", default=None, help="passed to `grade --late-penalty` with the due date "
                            "Gradescope gives (default: the policy in autograde/nbgrader_config.py)")
    args = parser.parse_args(argv)
    if args.command == "gradescope":
        return _gradescope(parser, args)
    known = assignment_ids()
    unknown = sorted(set(args.assignments) - set(known))
    if unknown:
        parser.error(f"unknown assignment(s): {', '.join(unknown)} (known: {', '.join(known)})")
    _log_to_stderr(args.verbose)
    from .compile import compile_assignments, write_nbgrader_sources

    chosen = args.assignments or known
    for path in compile_assignments(chosen) + write_nbgrader_sources(chosen):
        print(f"wrote {path}")
    return 0


def _gradescope(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Write the Gradescope autograder zip (:mod:`autograde.gradescope`)."""
    known = assignment_ids()
    if args.assignment not in known:
        parser.error(f"unknown assignment: {args.assignment} (known: {', '.join(known)})")
    from .gradescope import build

    try:
        written = build(args.assignment, Path(args.out), args.late_penalty)
    except ValueError as error:
        parser.error(str(error))
    print(f"wrote {written}: upload it as the assignment's autograder (Gradescope: Configure Autograder > Zip file "
          "upload)")
    return 0


def configurable_classes() -> list[type]:
    """Every configurable class of the package that grading uses, each once (its settings can be typed as
    ``--Class.name=value`` and are listed by ``--help-all``)."""
    from . import gradebook  # noqa: F401 (they define the classes)
    from .intake import collect  # noqa: F401
    from .pages import similarity  # noqa: F401
    from .results import late  # noqa: F401
    from .run import execute, kernel_manager  # noqa: F401

    found, todo = [], [Configurable]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("autograde.") and sub not in found and not issubclass(sub, Application):
                found.append(sub)
    return sorted(found, key=lambda c: c.__name__)


class GradeApp(Application):
    """``python -m autograde grade SUBMISSIONS --out OUT [options]``."""

    name = f"{PROG} grade"
    description = (
        "Autograde a folder or zip of submissions into scores.csv, grades.csv, notes.csv, feedback/ and report.html. "
        "SUBMISSIONS is an LMS export (Canvas, Moodle, Blackboard, Google Classroom, Gradescope; recognised by its "
        "file names), nbgrader's <student_id>/<assignment_id>/<assignment_id>.ipynb layout, <student>/ folders or "
        "<student>_<anything>.ipynb files. Settings come from autograde/nbgrader_config.py, then from the command "
        "line, which always wins.")
    examples = f"{PROG} grade export.zip --out grades --assignment 01-weighted-sum --timeout 30"

    out = Unicode("", help="output folder for scores.csv, grades.csv and nbgrader's work (required). A run is "
                           "written into a fresh folder inside it and swapped in at the end; only what the grader "
                           "wrote there (its marker file) is ever replaced").tag(config=True)
    assignments = List(Unicode(), help="grade only this assignment (repeatable; default: every assignment "
                                       "submitted)").tag(config=True)
    jobs = Integer(None, allow_none=True, help="submissions graded at once (default: the cores this process may "
                                               "use)").tag(config=True)
    scheduler = Unicode(None, allow_none=True, help="address of a Dask distributed scheduler (e.g. "
                                                    "tcp://10.0.0.5:8786): grade on its workers; the workers need "
                                                    "this repository's environment").tag(config=True)
    roster = Unicode(None, allow_none=True, help="CSV with a student_id column: the students to grade"
                     ).tag(config=True)
    lms = Enum(sorted(LAYOUTS), None, allow_none=True, help="read the export with this LMS's naming instead of "
                                                           "recognising it").tag(config=True)
    student_pattern = Unicode(None, allow_none=True, help="regular expression with a group 'student' that finds "
                              "the student id in a flat file name (for exports no layout recognises; default: the "
                              "text before the first underscore)").tag(config=True)
    gradebook = Unicode(None, allow_none=True, help="a Canvas gradebook export or a Moodle grading worksheet: write "
                        "a copy with the grades of the run's assignment filled in, ready to import, as "
                        "OUT/gradebook-import.csv").tag(config=True)
    gradebook_column = Unicode(None, allow_none=True, help="the gradebook column to fill (default: the one whose "
                               "title names the assignment)").tag(config=True)
    pdf = Bool(False, help="also print each feedback page and the report to PDF (OUT/feedback-pdf/, "
                           "OUT/report.pdf; for a Moodle export OUT/feedback-pdf.zip, ready for its feedback upload), "
                           "offline, with Chromium").tag(config=True)
    chromium = Unicode(None, allow_none=True, help="the Chromium executable that --pdf prints with (default: "
                       "chromium on the PATH, else /usr/bin/chromium)").tag(config=True)
    quiet = Bool(False, help="no progress bar").tag(config=True)
    verbose = Bool(False, help="say what was collected, recognised, repaired, reused, retried, and why"
                   ).tag(config=True)

    aliases = {
        "out": "GradeApp.out", "assignment": "GradeApp.assignments", "jobs": "GradeApp.jobs",
        "scheduler": "GradeApp.scheduler", "roster": "GradeApp.roster", "lms": "GradeApp.lms",
        "student-pattern": "GradeApp.student_pattern", "gradebook": "GradeApp.gradebook",
        "gradebook-column": "GradeApp.gradebook_column", "chromium": "GradeApp.chromium",
        # The limits: each sets the class that applies it, over the file's value for that class or a parent.
        "timeout": ("GuardedExecute.timeout", "time limit of one cell in seconds: the time it ran, less the time "
                                              "its kernel waited for a CPU other programs held (a busy machine "
                                              "costs no points); a cell is stopped anyway after "
                                              "GuardedExecute.timeout_wall_factor times this by the wall clock"),
        **{option: f"SandboxKernelManager.{name}" for option, name in KERNEL_OPTIONS.items()},
        "scratch": ("SandboxKernelManager.scratch_base", "folder for the kernels' scratch folders (ag-*), each removed "
                                                         "when its kernel ends (default: the system's temp folder)"),
        "missing-grades": "GradebookExport.missing",
        # Late penalties (autograde/results/late.py), applied after grading.
        "due": "LatePolicy.due", "late-penalty": "LatePolicy.late_penalty", "extensions": "LatePolicy.extensions",
        "late-cap": "LatePolicy.cap", "grace": "LatePolicy.grace",
        "blackboard-zone": "Collect.blackboard_zone",
    }
    flags = {
        "no-sandbox": ({"SandboxKernelManager": {"sandbox": False}},
                       "run student code without the bubblewrap sandbox (only where no sandbox can be had: "
                       "submissions could then read the solutions and other students' work and change grades)"),
        "sandbox-user": ({"SandboxKernelManager": {"sandbox_mode": "user"}},
                         "where bubblewrap cannot run (Docker's default seccomp profile, as on Gradescope): run "
                         "each kernel as an unprivileged user of its own instead (needs root; the repository, "
                         "the submissions and --out must be closed to other users)"),
        "no-similarity": ({"Similarity": {"enabled": False}}, "write no similarity report (similarity.csv and "
                          "similarity.html: pairs of students whose answers share much code, flagged, never graded)"),
        "quiet": ({"GradeApp": {"quiet": True}}, "no progress bar"),
        "pdf": ({"GradeApp": {"pdf": True}}, "also print each feedback page and the report to PDF (for a Moodle "
                                             "export also OUT/feedback-pdf.zip, ready for its feedback upload)"),
        "v": ({"GradeApp": {"verbose": True}}, "say what was collected, recognised, repaired, reused, retried, "
                                               "and why"),
        "verbose": ({"GradeApp": {"verbose": True}}, "the same as -v"),
    }

    def emit_alias_help(self):
        """The options' help, each with the value nbgrader_config.py gives its setting (the class default shown
        beside it is not what grading runs under)."""
        from .course import configured

        config, classes = load_config(), {c.__name__: c for c in self.classes}
        for line in super().emit_alias_help():
            found = re.search(r"Equivalent to: \[--(\w+)\.(\w+)", line)
            if found and found[1] != "GradeApp":
                value = configured(config, classes[found[1]], found[2])
                yield f"    In force unless typed: {value!r} (autograde/nbgrader_config.py)"
            yield line

    @property
    def classes(self) -> list[type]:  # (found when asked, so that nothing is imported before it is needed)
        return [GradeApp, *configurable_classes()]

    def settings(self) -> Config:
        """The settings in force: nbgrader_config.py's, then the command line's over them."""
        config = load_config()
        config.merge(self.cli_config)
        return config

    def typed(self) -> dict[str, dict]:
        """What the command line set, by class (the grading classes' settings only)."""
        return {section: dict(values) for section, values in self.cli_config.items()
                if isinstance(values, Config) and section != "GradeApp"}


class UsageError(Exception):
    """A command line that cannot be run (exit status 2)."""


def _grade(argv: list[str]) -> int:
    app = GradeApp()
    try:
        app.parse_command_line(argv)
        app.update_config(app.settings())
        return _run(app)
    except UsageError as error:
        print(f"{PROG} grade: error: {error}\n(see {PROG} grade --help)", file=sys.stderr)
        return 2
    except SystemExit as stop:  # traitlets ends with status 1 on a value of the wrong type; that is a usage error
        if stop.code == 1:
            return 2
        raise


def _check(app: GradeApp) -> tuple[Path, Path]:
    """The submissions and output folder; UsageError for anything that cannot be run."""
    unknown_options = [f"--{name}" for name, value in app.cli_config.items() if not isinstance(value, Config)]
    if unknown_options:
        raise UsageError(f"unrecognised option(s): {', '.join(unknown_options)}")
    known_classes = {c.__name__ for c in app.classes}
    unknown_classes = sorted(set(app.cli_config) - known_classes)
    if unknown_classes:
        raise UsageError(f"no such class to configure: {', '.join(unknown_classes)} (see --help-all)")
    for cls in [c for c in app.classes if c.__name__ in app.cli_config and c is not GradeApp]:  # (the app checked its own)
        traits = cls.class_traits(config=True)
        for name, value in app.cli_config[cls.__name__].items():
            if name not in traits:
                raise UsageError(f"{cls.__name__} has no setting {name!r} (see --help-all)")
            try:
                traits[name].validate(HasTraits(), value)
            except TraitError as error:
                raise UsageError(f"--{cls.__name__}.{name}: {error}") from None
    if len(app.extra_args) != 1:
        raise UsageError("give one folder or zip of submissions" if not app.extra_args
                         else f"one folder or zip of submissions, not {len(app.extra_args)}: {app.extra_args}")
    if not app.out:
        raise UsageError("--out is required")
    submissions = Path(app.extra_args[0])
    known = assignment_ids()
    unknown = sorted(set(app.assignments) - set(known))
    if unknown:
        raise UsageError(f"unknown assignment(s): {', '.join(unknown)} (known: {', '.join(known)})")
    if not submissions.exists():
        raise UsageError(f"{submissions} does not exist")
    if app.roster is not None and not Path(app.roster).is_file():
        raise UsageError(f"roster {app.roster} is not a file")
    if app.jobs is not None and app.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    typed = app.typed()
    memory = typed.get("SandboxKernelManager", {}).get("memory_mib")
    if memory is not None and memory < 256:
        raise UsageError("--memory must be at least 256 MiB (the kernel itself needs that much)")
    timeout = typed.get("GuardedExecute", {}).get("timeout")
    if timeout is not None and timeout < 1:
        raise UsageError("--timeout must be at least 1 second")
    for option, name in KERNEL_OPTIONS.items():
        value = typed.get("SandboxKernelManager", {}).get(name)
        if option != "memory" and value is not None and value < 0:
            raise UsageError(f"--{option} must be 0 (no limit) or more")
    if app.gradebook is not None:
        from . import gradebook

        if not Path(app.gradebook).is_file():
            raise UsageError(f"gradebook {app.gradebook} is not a file")
        try:
            gradebook.kind_of(Path(app.gradebook))  # before grading: a wrong file is found at once
        except ValueError as error:
            raise UsageError(str(error)) from None
    return submissions, Path(app.out)


def _run(app: GradeApp) -> int:
    submissions, out = _check(app)
    _log_to_stderr(app.verbose)
    from .grade import ChromiumUnavailable, SandboxUnavailable, grade

    try:
        result = grade(submissions, out, app.assignments or None, progress=not app.quiet, jobs=app.jobs,
                       roster=Path(app.roster) if app.roster else None, student_pattern=app.student_pattern,
                       scheduler=app.scheduler, lms=app.lms, overrides=app.typed(),
                       gradebook=Path(app.gradebook) if app.gradebook else None, pdf=app.pdf, chromium=app.chromium)
    except (NotADirectoryError, ValueError) as error:
        raise UsageError(str(error)) from None
    except (SandboxUnavailable, ChromiumUnavailable) as error:
        print(f"{PROG} grade: refusing to grade: {error}", file=sys.stderr)
        return 2
    print(f"{result.submissions} submission(s): {result.graded} graded now, {result.reused} unchanged since the last "
          f"run into this folder; {result.problems} test cell(s) with errors, timeouts, crashes or missing "
          "notebooks")
    print(f"wrote {out / 'scores.csv'}, {out / 'grades.csv'}, feedback in {out / 'feedback'} "
          f"and the report {out / 'report.html'}"
          + (f" (similar answers in {out / 'similarity.html'})" if (out / "similarity.html").is_file() else "") + "; "
          f"{len(result.unmatched)} file(s) not graded, listed in {out / 'unmatched.csv'}")
    if any(lt.rule for lt in result.lateness.values()):  # (a due date was set)
        from .results.late import summary

        print(summary(result.lateness))
    if app.pdf:
        from .pages import pdf

        zipped = out / pdf.MOODLE_ZIP
        if (out / pdf.REPORT_PDF).exists():
            print(f"wrote the PDFs: {out / pdf.PDF_FOLDER} (one per student), {out / pdf.REPORT_PDF}"
                  + (f" and {zipped}, ready for Moodle's 'Upload multiple feedback files in a zip'" if zipped.exists()
                     else ""))
        else:
            print("wrote no PDFs: printing failed (the warning above says why); the HTML feedback is written")
    if app.gradebook is not None:
        return _fill_gradebook(app, out)
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


def _fill_gradebook(app: GradeApp, out: Path) -> int:
    """Fill the instructor's gradebook export with the grades just written; print what was done."""
    from . import gradebook

    missing = gradebook.GradebookExport(config=app.settings()).missing
    try:
        filled = gradebook.fill(Path(app.gradebook), out / "scores.csv", out, missing, app.gradebook_column,
                                app.assignments or None)
    except ValueError as error:
        print(f"{PROG} grade: the grades are written, but not into the gradebook: {error}", file=sys.stderr)
        return 2
    scaled = [f"{filled.columns[a]!r}" + (f" (scaled to its {filled.points[a]:g} points)" if filled.points[a] else "")
              for a in filled.columns]
    print("the gradebook copy changes only " + ", ".join(f"column {c!r} ({n} cell(s))" for c, n in filled.changed.items()))
    print(f"wrote {filled.path}, the {filled.kind} ready to import: {filled.filled} grade(s) in {', '.join(scaled)}; "
          f"{filled.missing} student(s) there with nothing handed in "
          + ("got 0" if missing == "zero" else "left as exported") + "; "
          f"{len(filled.absent)} student(s) graded but not in the gradebook"
          + (f", listed in {out / gradebook.ABSENT_FILE}: "
             + ", ".join(f"{s} ({lms_id or 'no LMS id'})" for s, lms_id, _ in filled.absent[:10]) if filled.absent else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
