"""Each export layout (each LMS) is one adapter module: the generic steps name none, and a new one needs no other
module (issue 33)."""
import ast
import csv
import re
import zipfile
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

import autograde
from autograde import gradebook
from autograde.course import assignment_ids
from autograde.intake import lms, times
from autograde.intake.adapter import Entry, FeedbackUpload, Filled, Gradebook, Layout, SubmissionTime
from autograde.intake.collect import collect
from autograde.pages import pdf

PACKAGE = Path(autograde.__file__).parent
FIRST = assignment_ids()[0]
# The steps every layout goes through; what is specific to one layout is its adapter's (autograde/intake/<name>.py).
GENERIC = ["intake/collect.py", "intake/times.py", "gradebook.py", "pages/pdf.py"]
# The setting c.Collect.blackboard_zone keeps its name (it is the configuration's, and the README's): collect defines
# it and passes it on by that name; its meaning (help, check, use) is the adapter's module, which collect names for it.
ALLOWED = {"intake/collect.py": {"blackboard_zone", "blackboard"}, "intake/times.py": {"blackboard_zone"}}
# Layouts that are no LMS: plain folders (the fallback) and nbgrader's own (the grader's framework, named everywhere).
NOT_LMS = {lms.FALLBACK, "nbgrader"}


def lms_names() -> list[str]:
    """The layouts that are some system's, by name."""
    return [name for name in lms.LAYOUTS if name not in NOT_LMS]


def named_in_code(path: Path, names: list[str], allowed: frozenset[str] = frozenset()) -> list[str]:
    """Where the module at `path` names one of `names` in its code: in a string (not a docstring) or an identifier
    (other than those `allowed`). Imports are left out (a module may keep an adapter's names importable from it for
    its old callers)."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)) or (
        isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets))
        for n in ast.walk(node)}
    pattern = re.compile(rf"(?<![a-z])({'|'.join(map(re.escape, names))})(?![a-z])", re.IGNORECASE)
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped or id(node) in docstrings:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            texts = [node.value]
        else:
            texts = [getattr(node, attribute) for attribute in ("id", "attr", "name", "arg")
                     if isinstance(getattr(node, attribute, None), str)]
        for text in texts:
            if text not in allowed and pattern.search(text):
                found.append(f"{path.relative_to(path.parents[1])}:{node.lineno}: {text[:80]!r}")
    return found


def test_the_generic_steps_name_no_lms():
    found = [hit for module in GENERIC
             for hit in named_in_code(PACKAGE / module, lms_names(), frozenset(ALLOWED.get(module, ())))]
    assert not found, "LMS knowledge outside its adapter module:\n" + "\n".join(found)


def test_the_check_sees_an_lms_named_in_code(tmp_path):
    # (So that the check above cannot pass by reading nothing.)
    module = tmp_path / "pkg" / "step.py"
    module.parent.mkdir()
    module.write_text('"""Canvas, in a docstring, is fine."""\nfrom .canvas import CANVAS\n\n\n'
                      'def when(layout, moodle_zone):\n    """Moodle too."""\n'
                      '    return layout == "canvas" or moodle_zone\n')
    assert sorted(hit.split(": ", 1)[1] for hit in named_in_code(module, lms_names())) == [
        "'canvas'", "'moodle_zone'", "'moodle_zone'"]
    assert named_in_code(module, lms_names(), frozenset({"moodle_zone"})) == ["pkg/step.py:7: 'canvas'"]


# A toy LMS: "toy~<user id>~<file>" files, a time in the name, a gradebook "Toy Id,Points", a feedback zip.
TOY_NAME = re.compile(r"^toy~(?P<user>\d+)~(?P<file>.+)$")
TOY_TIME = datetime(2026, 3, 1, 22, 10, tzinfo=UTC)


def _toy_reader(root: Path, pattern: str):
    def read(rel: PurePosixPath) -> list[Entry]:
        found = TOY_NAME.match(rel.name) if len(rel.parts) == 1 else None
        return [Entry(f"u{found['user']}", found["user"], found["file"])] if found else []
    return read


def _toy_fill(rows, header, grades, missing, column) -> Filled:
    (assignment, by_student), = grades.items()
    filled = Filled(Path(), "toy gradebook", {assignment: "Points"}, {assignment: None})
    by_id = {g.lms_id: g for g in by_student.values()}
    for row in rows[1:]:
        grade = by_id.get(row[0])
        if grade is not None:
            row[1] = f"{grade.score:g}"
            filled.filled += 1
    return filled


TOY = Layout(
    "toy", "Toy LMS", _toy_reader,
    times=lambda root, rel, entry, zipped, zone: SubmissionTime(TOY_TIME, "toy's own clock"),
    gradebook=Gradebook("toy", "a toy gradebook", lambda header: header[:1] == ["Toy Id"], _toy_fill),
    feedback=FeedbackUpload("toy-feedback.zip",
                            lambda pdfs, ids, names: ({f"{ids[s]}/feedback.pdf": p for s, p in pdfs.items() if s in ids},
                                                      [s for s in pdfs if s not in ids]),
                            "not in %s: %s (PDFs in %s)"))


def test_a_new_lms_is_its_adapter_alone(tmp_path, monkeypatch):
    # Registered (what its line in the registry does), the toy LMS is collected, timed, filled and given its
    # feedback zip by the generic steps, unchanged.
    monkeypatch.setattr(lms, "LAYOUTS", {TOY.name: TOY, **lms.LAYOUTS})
    monkeypatch.setitem(lms.GRADEBOOKS, TOY.gradebook.kind, TOY.gradebook)
    export = tmp_path / "export"
    export.mkdir()
    notebook = Path(autograde.__file__).parents[1] / "exercises" / FIRST / f"{FIRST}.ipynb"
    for user in ("101", "102"):
        (export / f"toy~{user}~{FIRST}.ipynb").write_bytes(notebook.read_bytes())

    collected = collect(export, tmp_path / "submitted", [FIRST])
    assert (collected.lms, collected.layout) == ("toy", "Toy LMS")
    assert sorted(collected.submissions) == [("u101", FIRST), ("u102", FIRST)]
    assert collected.lms_ids == {"u101": "101", "u102": "102"}
    assert collected.times[("u101", FIRST)] == SubmissionTime(TOY_TIME, "toy's own clock")
    assert times.evidence("toy", export, PurePosixPath(f"toy~101~{FIRST}.ipynb"), Entry("u101"), False).when == TOY_TIME

    scores = tmp_path / "scores.csv"
    with open(scores, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student_id", "lms_user_id", "assignment", "cell", "score", "max_score", "status"])
        writer.writerow(["u101", "101", FIRST, "a", "2", "3", "passed"])
    book = tmp_path / "toy.csv"
    book.write_text("Toy Id,Points\r\n101,\r\n999,\r\n")
    assert gradebook.kind_of(book) == "toy"
    filled = gradebook.fill(book, scores, tmp_path)
    assert filled.kind == "toy gradebook" and filled.filled == 1
    assert (tmp_path / gradebook.IMPORT_FILE).read_bytes() == b"Toy Id,Points\r\n101,2\r\n999,\r\n"

    def printed(jobs, chromium, progress, tabs):  # (no browser: the files' names are what is tested)
        for _, target in jobs:
            target.write_bytes(b"%PDF-")
        return 1.0

    monkeypatch.setattr(pdf, "print_pages", printed)
    pages = {s: tmp_path / f"{s}.html" for s in ("u101", "u102", "roster-only")}
    for page in [*pages.values(), tmp_path / "report.html"]:
        page.write_text("<p>feedback</p>")
    out = tmp_path / "out"
    result = pdf.write_pdfs(out, pages, tmp_path / "report.html", collected.lms_ids, collected.names,
                            collected.lms, chromium="unused")
    assert result.upload == out / "toy-feedback.zip" and result.not_in_zip == ["roster-only"]
    with zipfile.ZipFile(result.upload) as archive:
        assert sorted(archive.namelist()) == ["101/feedback.pdf", "102/feedback.pdf"]
