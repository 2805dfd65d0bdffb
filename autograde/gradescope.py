"""A Gradescope autograder: ``python -m autograde gradescope <a>`` writes its zip, and its run grades one submission.

Gradescope builds an image from the zip (``setup.sh`` runs once, as root, on its
Ubuntu image, with the zip's contents in ``/autograder/source``), then for each
submission runs ``/autograder/run_autograder`` with the student's files in
``/autograder/submission/`` and reads ``/autograder/results/results.json``.

The run (:func:`run`) is no grader of its own: it lays the one notebook out in
nbgrader's layout (``student/<a>/<a>.ipynb``, with nbgrader's ``timestamp.txt``
holding Gradescope's submission time) and runs the real ``python -m autograde
grade`` on it, with the same sandbox, checker, tests and settings
(``autograde/nbgrader_config.py`` is in the zip). Then it turns what that
command wrote (scores.csv, grades.csv and the result it keeps for each
submission) into results.json: one test per test cell, with the message the
student's feedback page shows, and ``after_published`` for every test cell that
holds hidden tests. The due date comes from ``submission_metadata.json``: the
student's own (an extension) where Gradescope lists one, else the assignment's;
it is passed to the grade command as ``--due`` where that command knows the
option. Whatever happens (no notebook, several, a file that is no notebook, the
grader failing), results.json is written and says so in words.

The folder ``/autograder`` can be moved with the environment variable
:data:`ROOT_ENV`, and the Python that runs the grader with :data:`PYTHON_ENV`
(tests lay Gradescope's folders out in a temporary folder and run
``run_autograder`` there with their own Python instead of running setup.sh).
"""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import zipfile
from datetime import datetime
from pathlib import Path

from .cells import holds_hidden_tests
from .course import EXERCISES, REPO, SOLUTIONS, source_notebook
from .intake.times import nbgrader_timestamp
from .run.sandbox import check_sandbox

ROOT_ENV = "AUTOGRADE_GRADESCOPE_ROOT"  # Gradescope's /autograder, elsewhere
PYTHON_ENV = "AUTOGRADE_GRADESCOPE_PYTHON"  # the Python with the grader's packages (setup.sh's venv by default)
VENV = "/opt/autograde/venv"  # where setup.sh installs the pinned packages (outside /autograder/source: the
#                               sandbox reads the packages, never the grader's source with the hidden tests)
CONFIG_FILE = "gradescope.json"  # in the zip: the assignment, and the late-penalty policy to pass on
STUDENT = "student"  # the submission's student id in the grade command's layout (results.json names no one)
# What Gradescope may show, and when (its autograder specification).
VISIBLE, AFTER_PUBLISHED, HIDDEN = "visible", "after_published", "hidden"

SETUP_SH = f"""\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu): it installs what the grader
# needs. The course pins Python 3.11 and every package (requirements.txt); bubblewrap is the sandbox that student
# code runs in.
set -euxo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends bubblewrap ca-certificates
# Ubuntu 22.04 has Python 3.11 in its own archive; later releases only through the deadsnakes archive.
if ! apt-get install -y --no-install-recommends python3.11 python3.11-venv; then
    apt-get install -y --no-install-recommends software-properties-common gpg-agent
    add-apt-repository -y ppa:deadsnakes/ppa
    apt-get update
    apt-get install -y --no-install-recommends python3.11 python3.11-venv
fi
python3.11 -m venv {VENV}
# PyTorch's CPU build (the exact version pinned: the CPU wheel is that version with a +cpu tag): no GPU here.
{VENV}/bin/python -m pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu \\
    -r /autograder/source/requirements.txt
# Whether student code can be sandboxed with bubblewrap on this image: said in the build's log (each run says it
# again; where it cannot, each kernel runs as an unprivileged user of its own: sandbox_flags).
cd /autograder/source && {VENV}/bin/python -c \\
    "from autograde.run.sandbox import check_sandbox; print(check_sandbox() or 'the sandbox works on this image')"
"""

RUN_AUTOGRADER = f"""\
#!/usr/bin/env bash
# Gradescope runs this for every submission: it grades /autograder/submission/ with `python -m autograde grade`
# and writes /autograder/results/results.json (autograde/gradescope.py). {ROOT_ENV} moves /autograder and
# {PYTHON_ENV} chooses the Python (the tests run it so, in a temporary folder).
root="${{{ROOT_ENV}:-/autograder}}"
python="${{{PYTHON_ENV}:-{VENV}/bin/python}}"
cd "$root/source" && exec "$python" -m autograde.gradescope "$root"
"""


# ----------------------------------------------------------------------------------------------- the zip


def zip_entries(assignment: str, late_penalty: str | None = None) -> dict[str, bytes]:
    """What the autograder zip holds, by path in the zip: setup.sh, run_autograder, gradescope.json,
    requirements.txt, the grader (``autograde/``, its settings included) and the assignment's two files
    (``solutions/<a>/<a>.py``, whose hidden tests grading runs, and the released ``exercises/<a>/<a>.ipynb``,
    which a submission is rebuilt on). Nothing else of the course: no other chapter, no book, no tests."""
    entries = {"setup.sh": SETUP_SH.encode(), "run_autograder": RUN_AUTOGRADER.encode(),
               CONFIG_FILE: (json.dumps({"assignment": assignment, "late_penalty": late_penalty}, indent=2)
                             + "\n").encode(),
               "requirements.txt": (REPO / "requirements.txt").read_bytes()}
    package = REPO / "autograde"
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".j2"):
            entries[path.relative_to(REPO).as_posix()] = path.read_bytes()
    for path in (SOLUTIONS / assignment / f"{assignment}.py", EXERCISES / assignment / f"{assignment}.ipynb"):
        entries[path.relative_to(REPO).as_posix()] = path.read_bytes()
    return entries


def build(assignment: str, out: Path, late_penalty: str | None = None) -> Path:
    """Write the autograder zip of `assignment` to `out` (see :func:`zip_entries`); returns `out`.

    The same sources give the same bytes (fixed dates, sorted entries). `late_penalty` (``10%/day``, the grade
    command's ``--late-penalty``) is passed on with the due date Gradescope gives each run; without it the policy in
    the zip's nbgrader_config.py applies.
    """
    if late_penalty:  # (a bad rule is said now, not in every student's run)
        from .results.late import LatePolicy

        LatePolicy(late_penalty=late_penalty).rule()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in zip_entries(assignment, late_penalty).items():
            info = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if name in ("setup.sh", "run_autograder") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return out


# ----------------------------------------------------------------------------------------------- the run


def notebooks_in(submission: Path) -> list[Path]:
    """The notebooks a student handed in: every ``*.ipynb`` under `submission`, less editors' and archivers' leftovers
    (``.ipynb_checkpoints/``, ``__MACOSX/``, hidden files)."""
    return sorted(p for p in submission.rglob("*.ipynb") if p.is_file()
                  and not any(part.startswith(".") or part == "__MACOSX" for part in p.relative_to(submission).parts))


def due_date(metadata: dict) -> tuple[str | None, str]:
    """(the due date as ISO 8601 with its offset, or None; where it came from) in submission_metadata.json.

    A student's own due date (an extension: Gradescope lists it under ``users[].assignment``) wins over the
    assignment's; in a group, the latest of its members' counts. The late due date is the end of late submission,
    not a due date: Gradescope itself refuses what comes after it.
    """
    own = [user.get("assignment", {}).get("due_date") for user in metadata.get("users") or []
           if isinstance(user, dict) and isinstance(user.get("assignment"), dict)]
    own = [d for d in own if isinstance(d, str) and _aware(d)]
    if own:
        return max(own, key=datetime.fromisoformat), "the student's own due date"
    due = (metadata.get("assignment") or {}).get("due_date")
    if due and not (isinstance(due, str) and _aware(due)):  # (the grade command would refuse it, for every student)
        return None, f"no due date: the assignment's {due!r} is no ISO 8601 time with an offset"
    return (due, "the assignment's due date") if due else (None, "no due date")


def _aware(text: str) -> bool:
    """Whether `text` is an ISO 8601 time with its offset (as Gradescope writes them)."""
    try:
        return datetime.fromisoformat(text).tzinfo is not None
    except ValueError:
        return False


def _no_such_option(done: subprocess.CompletedProcess, options: list[str]) -> bool:
    """Whether the grade command refused to run because it does not know one of `options` (a grader older than
    late penalties: ``--due``), before it graded anything."""
    return done.returncode == 2 and "unrecogni" in done.stderr and any(o in done.stderr for o in options)


def hidden_cells(assignment: str) -> set[str]:
    """Grade ids of the test cells of `assignment` that hold hidden tests."""
    return {c.metadata["nbgrader"]["grade_id"] for c in source_notebook(assignment).cells
            if holds_hidden_tests(c)}


def _rows(out: Path, assignment: str):
    """The submission's rows (CellResult) and notes: as the grade command kept them (with each test's whole message
    and the student's line), else from scores.csv."""
    from .results.classify import CellResult

    kept = out / "results" / STUDENT / f"{assignment}.json"
    try:
        saved = json.loads(kept.read_text())
        return [CellResult(**row) for row in saved["rows"]], list(saved.get("notes", []))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    with open(out / "scores.csv", newline="", encoding="utf-8") as f:
        rows = [CellResult(STUDENT, r["assignment"], r["grade_id"], float(r["score"]), float(r["max_score"]),
                           r["status"], r["message"].removeprefix("'")) for r in csv.DictReader(f)
                if r["student_id"] == STUDENT and r["assignment"] == assignment]
    notes = []
    if (out / "notes.csv").is_file():
        with open(out / "notes.csv", newline="", encoding="utf-8") as f:
            notes = [r["note"].removeprefix("'") for r in csv.DictReader(f)]
    return rows, notes


def _grade_row(out: Path) -> dict:
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return next(r for r in csv.DictReader(f) if r["student_id"] == STUDENT)


def _test_output(test: dict, not_graded: str) -> str:
    """What a test cell's box on Gradescope says: the feedback page's words for it (once for the whole notebook, at
    the top, when `not_graded` says why no check could run)."""
    if test["passed"]:
        return "Passed."
    if not_graded:
        return "Not run: your notebook could not be graded (why is said at the top)."
    lines = [test["why"], test["message"]]
    if test["where"]:
        lines.append(f"Your code: {test['where']}")
    return "\n".join(line for line in lines if line)


def _hidden_cell_named(note: str, hidden: set[str]) -> str | None:
    """The hidden test cell a note names (a kernel that died in it, the notebook's time running out at it), if any:
    such a note is derived from a hidden test and is held back with that cell's result until grades are published."""
    return next((cell for cell in sorted(hidden) if re.search(rf"(?<![\w.]){re.escape(cell)}(?![\w])", note)), None)


def _penalty_text(grade: dict) -> str:
    """The late penalty grades.csv records, in words ('' when none)."""
    try:
        penalty = float(grade.get("late_penalty") or 0)
    except ValueError:
        penalty = 0.0
    if not penalty:
        return ""
    try:  # (hours, as grades.csv gives them)
        late = f", {float(grade['late_by']):.4g} hour(s) late"
    except (KeyError, ValueError):
        late = f", {grade['late_by']} late" if grade.get("late_by") else ""
    return (f"Late penalty: submitted {grade.get('submitted_at', '')}{late}: {penalty:g} point(s) deducted from "
            f"{float(grade['raw_score']):g}, final score {float(grade['score']):g}.")


def results_from(out: Path, assignment: str) -> dict:
    """results.json for the submission the grade command graded into `out`."""
    from .pages.feedback import assignment_context

    rows, notes = _rows(out, assignment)
    context = assignment_context(STUDENT, assignment, rows, notes)
    hidden = hidden_cells(assignment)
    listed = {test["grade_id"] for section in context["exercises"] for test in section["tests"]}
    # (A note on a hidden cell with no box of its own goes to a box of its own, shown with the hidden tests.)
    held = [(note, cell if cell in listed or cell is None else "") for note in context["notes"]
            for cell in [_hidden_cell_named(note, hidden)]]
    tests = []
    for section in context["exercises"]:
        for test in section["tests"]:
            name = f"{section['heading']}: {test['description']}"
            own_notes = [f"Note: {note}" for note, cell in held if cell == test["grade_id"]]
            tests.append({"name": f"{name} [{test['grade_id']}]", "score": test["score"],
                          "max_score": test["max_score"], "status": "passed" if test["passed"] else "failed",
                          "output": "\n".join([_test_output(test, context["not_graded"])] + own_notes),
                          "visibility": AFTER_PUBLISHED if test["grade_id"] in hidden else VISIBLE,
                          "extra_data": {"grade_id": test["grade_id"],
                                         "status": next(str(r.status) for r in rows if r.grade_id == test["grade_id"])}})
    unboxed = [f"Note: {note}" for note, cell in held if cell == ""]
    if unboxed:
        tests.append({"name": "Notes on the hidden tests", "score": 0.0, "max_score": 0.0, "status": "passed",
                      "output": "\n".join(unboxed), "visibility": AFTER_PUBLISHED})
    grade = _grade_row(out)
    lines = [context["title"]]
    if context["not_graded"]:
        lines.append(f"Your notebook could not be graded: {context['not_graded']}")
    lines += [f"Note: {note}" for note, cell in held if cell is None]
    penalty = _penalty_text(grade)
    if penalty:
        lines.append(penalty)
    if hidden:
        lines.append("The results of the test cells that hold hidden tests are shown once grades are published.")
    return {"score": float(grade["score"]), "output": "\n\n".join(lines), "visibility": VISIBLE,
            "stdout_visibility": HIDDEN, "tests": tests}


def not_graded(message: str) -> dict:
    """results.json for a submission that could not be graded: no points, and why, in words."""
    return {"score": 0.0, "output": message, "visibility": VISIBLE, "stdout_visibility": HIDDEN, "tests": []}


def sandbox_flags(root: Path, log) -> list[str]:
    """The grade command's sandbox, said in the log: bubblewrap where it runs; else (Docker's default seccomp
    profile blocks its namespaces: containers/bubblewrap#505), as root, each kernel as an unprivileged user of its
    own (``--sandbox-user``), with Gradescope's folders (the grader's source, the submission, the results) first
    closed to other users. Without either, the grade command refuses and says why."""
    problem = check_sandbox()
    if problem is None:
        log("sandbox: bubblewrap")
        return []
    if os.geteuid() != 0:
        log(f"sandbox: bubblewrap cannot run here ({problem}), and a user of its own per kernel needs root")
        return []
    for folder in ("source", "submission", "results"):
        (root / folder).mkdir(exist_ok=True)
        (root / folder).chmod(0o700)
    log(f"sandbox: bubblewrap cannot run here ({problem}); each kernel runs as an unprivileged user of its own "
        "instead (no view of the autograder's files; other processes and the system's files stay visible)")
    return ["--sandbox-user"]


def grade_one(root: Path, config: dict, log) -> dict:
    """Grade the submission in `root`/submission with the grade command; its results.json. `log` prints for the
    instructor (Gradescope's stdout, which students do not see)."""
    assignment = config["assignment"]
    found = notebooks_in(root / "submission")
    if not found:
        return not_graded(f"No notebook (.ipynb file) was found in your submission, so nothing was graded. Upload "
                          f"your completed {assignment}.ipynb.")
    if len(found) > 1:
        names = ", ".join(p.relative_to(root / "submission").as_posix() for p in found)
        return not_graded(f"Your submission holds {len(found)} notebooks ({names}), so it is not clear which one to "
                          f"grade and none was graded. Upload only your completed {assignment}.ipynb.")
    log(f"grading {found[0].relative_to(root)} as {assignment}")
    try:
        metadata = json.loads((root / "submission_metadata.json").read_text())
    except (OSError, ValueError) as error:
        log(f"no readable submission_metadata.json ({error}): no due date, no submission time")
        metadata = {}
    work = Path(tempfile.mkdtemp(prefix="autograde-gradescope-"))
    try:
        folder = work / "submissions" / STUDENT / assignment
        folder.mkdir(parents=True)
        shutil.copyfile(found[0], folder / f"{assignment}.ipynb")
        if metadata.get("created_at"):
            (folder / "timestamp.txt").write_text(str(metadata["created_at"]) + "\n")  # (nbgrader's own file)
            stamped = nbgrader_timestamp(str(metadata["created_at"]))
            if stamped is not None:  # the copy is dated as handed in, not flagged as "dated after its timestamp"
                os.utime(folder / f"{assignment}.ipynb", (stamped.timestamp(), stamped.timestamp()))
        command = [sys.executable, "-m", "autograde", "grade", str(work / "submissions"), "--out", str(work / "out"),
                   "--assignment", assignment, "--lms", "nbgrader", "--jobs", "1", "--quiet", *sandbox_flags(root, log)]
        # The due date and extensions are Gradescope's: none from the instructor's own nbgrader_config.py (an
        # extensions file there is not in the zip; a due date there is another course's or another assignment's).
        late = ["--LatePolicy.extensions="]
        due, source = due_date(metadata)
        if due is not None:
            late += ["--due", due] + (["--late-penalty", config["late_penalty"]] if config.get("late_penalty") else [])
            log(f"due {due} ({source}), submitted {metadata.get('created_at')}")
        else:
            late += ["--LatePolicy.due="]
            log(f"{source}: no late penalty")
        source_folder = Path(__file__).resolve().parent.parent
        log("$ " + " ".join(command + late))
        done = subprocess.run(command + late, cwd=source_folder, capture_output=True, text=True)
        if late and _no_such_option(done, ["--due", "--late-penalty"]):
            log(f"{done.stderr.strip()}\nthis grader has no late penalties: graded without, no penalty applied")
            done = subprocess.run(command, cwd=source_folder, capture_output=True, text=True)
        log(done.stdout + done.stderr)
        if done.returncode != 0 or not (work / "out" / "grades.csv").is_file():
            return not_graded("The autograder could not run, so this is not a grade of your work (your instructor "
                              "sees why in the autograder's log). Please tell your instructor.")
        return results_from(work / "out", assignment)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(root: Path) -> dict:
    """Grade Gradescope's submission in `root` and write ``root/results/results.json``; returns what it wrote. Never
    raises for a submission: whatever goes wrong is said in results.json (and, in full, on stdout)."""
    started = time.monotonic()
    root = Path(root)
    print(f"autograde {Path(__file__).resolve().parent} grading in {root}", flush=True)
    try:
        config = json.loads((Path(__file__).resolve().parent.parent / CONFIG_FILE).read_text())
        results = grade_one(root, config, lambda text: print(text, flush=True))
    except Exception:  # the grader's own failure: said, never a crash without results.json
        print(traceback.format_exc(), flush=True)
        results = not_graded("The autograder failed, so this is not a grade of your work (your instructor sees why in "
                             "the autograder's log). Please tell your instructor.")
    results["execution_time"] = round(time.monotonic() - started)  # (whole seconds, as Gradescope's example)
    (root / "results").mkdir(parents=True, exist_ok=True)
    (root / "results" / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {root / 'results' / 'results.json'}: score {results['score']:g}, {len(results['tests'])} test(s)",
          flush=True)
    return results


if __name__ == "__main__":
    run(Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get(ROOT_ENV, "/autograder")))
