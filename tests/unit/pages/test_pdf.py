"""Feedback as PDF (issue 24): ``python -m autograde grade --pdf``.

The PDFs are read back with pypdf: a student's PDF must hold the lines of their
feedback page (the score, each exercise, every lost check's reason and message),
the report's PDF its figure, and a Moodle export's ``feedback-pdf.zip`` must be
read by Moodle's own importer as each student's. That importer is PHP
(``mod/assign/feedback/file/importziplib.php``, ``is_valid_filename_for_import``);
:func:`moodle_reads` is its path parsing, line for line, so the zip is checked
by the rule Moodle applies, not by the rule the grader wrote it with.

The naming, the owned outputs and a missing Chromium are fast (no browser);
printing is slow (one Chromium), grading through the command slower (kernels).
"""
from __future__ import annotations

import html.parser
import logging
import re
import shutil
import unicodedata
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograde.course import REPO, assignment_ids
from autograde.output_folder import MARKER, OWN_FILES, OWN_FOLDERS, not_ours
from autograde.pages import pdf
from autograde.pages.feedback import write_feedback
from autograde.pages.report import write_report
from autograde.results.classify import CellResult, Status, graded_cells
from tests.support.commands import grade_command, grades_by_student, run_main, write_zip
from tests.support.synthetic import completed_notebook

FIRST = assignment_ids()[0]
MUTANT = REPO / "tests" / "mutants" / FIRST / "softmax" / "no_max_shift.py"


def moodle_reads(path: str, participants: set[str]) -> tuple[str, str, str] | None:
    """(participant id, plugin, file name) that Moodle's feedback zip importer reads from a path in the zip, or None
    where it skips the file: ``is_valid_filename_for_import`` in mod/assign/feedback/file/importziplib.php."""
    parts = path.split("/")
    if parts[-1].startswith((".", "~")):  # (hidden files are ignored)
        return None
    while parts:
        info = parts.pop(0).split("_", 4)  # (PHP's explode('_', $pathpart, 5))
        if len(info) < 4 or not info[1].isdigit() or info[1] not in participants:
            continue
        plugin = f"{info[2]}_{info[3]}"
        if plugin not in ("assignfeedback_file", "assignsubmission_file"):  # (get_plugin_by_type finds none)
            continue
        return info[1], plugin, "/".join([info[4] if len(info) > 4 else "", *parts])
    return None


def pdf_text(path: Path) -> str:
    """The text of a PDF without its page numbers and the pass/fail marks (drawn beside the text, extracted anywhere),
    ligatures undone (ﬁ → fi) and white space removed (lines break where the page ends)."""
    import pypdf

    pages = [re.sub(r"\d+ / \d+\s*$", "", page.extract_text()) for page in pypdf.PdfReader(path).pages]
    return squeezed("".join(pages).replace("✓", "").replace("✗", ""))


class _Lines(html.parser.HTMLParser):
    """The text of a feedback page's headings, paragraphs, list items and messages, one entry per element (its own
    text and inline elements', not that of the blocks inside it)."""

    BLOCKS = {"h1", "h2", "h3", "p", "li", "pre", "code"}

    def __init__(self):
        super().__init__()
        self.lines: list[str] = []
        self.open: list[list[str]] = []
        self.in_head = False

    def handle_starttag(self, tag, attrs):
        self.in_head = self.in_head or tag in ("head", "style", "title")
        if tag in self.BLOCKS:
            self.open.append([])

    def handle_endtag(self, tag):
        if tag in ("head", "style", "title"):
            self.in_head = False
        if tag in self.BLOCKS and self.open:
            text = "".join(self.open.pop()).strip()
            if text:
                self.lines.append(text)

    def handle_data(self, data):
        if not self.in_head and self.open:  # (an element's own text: a list item's paragraphs are lines of their own)
            self.open[-1].append(data)


def page_lines(path: Path) -> list[str]:
    """The lines a reader sees on an HTML feedback page."""
    parser = _Lines()
    parser.feed(path.read_text())
    return parser.lines


def squeezed(text: str) -> str:
    """`text` with ligatures undone and no white space: compared so, a line matches wherever the page broke it."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


# ---------------------------------------------------------------------------------------------------------------------
# Fast: names, owned outputs, a missing Chromium


def test_a_pdf_is_named_by_the_student_id_and_the_lms_user_id():
    assert pdf.pdf_name("Jane-Doe", "123456") == "Jane-Doe_123456.pdf"
    assert pdf.pdf_name("s1234") == "s1234.pdf", "without an LMS user id the student id alone names the file"
    # Gradescope's user id is whatever the SID or email says: never a folder, never past a file name's length.
    for odd in ("2024/17", "../../x", "a" * 300 + "@example.edu"):
        name = pdf.pdf_name("Jane-Doe", odd)
        assert "/" not in name and len(name.encode()) < 255 and name.startswith("Jane-Doe_"), name


def test_a_failure_to_print_leaves_no_pdf_and_costs_no_grade(tmp_path, monkeypatch, caplog):
    import autograde.grade as grading

    (tmp_path / "class" / "ann" / FIRST).mkdir(parents=True)
    (tmp_path / "class" / "ann" / FIRST / f"{FIRST}.ipynb").write_text("not JSON, which grades fast")
    monkeypatch.setattr(pdf, "check_chromium", lambda path=None: "/usr/bin/chromium")

    def half_printed(out, *args, **kwargs):
        (out / pdf.PDF_FOLDER).mkdir(exist_ok=True)
        (out / pdf.PDF_FOLDER / "ann.pdf").write_bytes(b"%PDF half")
        raise RuntimeError("Timeout 30000ms exceeded")

    monkeypatch.setattr(pdf, "write_pdfs", half_printed)
    grading.grade(tmp_path / "class", tmp_path / "out", [FIRST], progress=False, jobs=1, sandbox=False, pdf=True)
    assert (tmp_path / "out" / "grades.csv").is_file(), "a failure to print cost the grades"
    assert not (tmp_path / "out" / pdf.PDF_FOLDER).exists(), "a half-printed PDF folder was left"
    assert "no PDFs" in caplog.text and "Timeout" in caplog.text, caplog.text


@pytest.mark.parametrize("full_name, shown", [
    ("Alice Smith", "Alice Smith"),
    ("Anne_Marie O'Neil", "Anne Marie O'Neil"),  # an '_' would shift Moodle's fields: a space, as Moodle's download
    ("Jean/Luc Picard", "Jean Luc Picard"),  # a path separator would make two folders
    ("", "Participant"),
])
def test_moodles_importer_reads_each_feedback_folder_as_that_participants_feedback_file(full_name, shown):
    folder = pdf.moodle_folder(full_name, "123456")
    assert folder == f"{shown}_123456_assignfeedback_file_"
    read = moodle_reads(f"{folder}/{pdf.MOODLE_FILE}", {"123456", "654321"})
    assert read is not None, f"Moodle's importer would skip {folder}/{pdf.MOODLE_FILE}"
    participant, plugin, name = read
    assert (participant, plugin) == ("123456", "assignfeedback_file"), f"read as {read}"
    # (Moodle files it under the rest of the path: "/feedback.pdf", as for the folders of its own download.)
    assert name.strip("/") == pdf.MOODLE_FILE, f"Moodle would name the feedback file {name!r}"


def test_the_importer_oracle_skips_what_moodle_skips():
    # The oracle must be able to say no: an '_' in the name shifts the fields, as it would in Moodle.
    assert moodle_reads("Anne_Marie_123456_assignfeedback_file_/feedback.pdf", {"123456"}) is None
    assert moodle_reads("Alice_999_assignfeedback_file_/feedback.pdf", {"123456"}) is None  # not a participant
    assert moodle_reads("Alice_123456_assignfeedback_nothing_/f.pdf", {"123456"}) is None  # no such plugin


def test_a_participant_id_that_is_no_number_is_refused():
    with pytest.raises(ValueError, match="participant id is a number"):
        pdf.moodle_folder("Alice Smith", "12a")


def test_the_pdfs_are_the_graders_own_outputs_and_an_instructors_files_of_those_names_are_never_replaced(tmp_path):
    assert pdf.PDF_FOLDER in OWN_FOLDERS and {pdf.REPORT_PDF, pdf.MOODLE_ZIP} <= set(OWN_FILES), \
        "a rerun must replace the PDFs it wrote"
    for name in (pdf.REPORT_PDF, pdf.MOODLE_ZIP):
        out = tmp_path / name.replace(".", "-")
        out.mkdir()
        (out / name).write_text("the instructor's own")
        assert not_ours(out) == [name], f"an instructor's own {name} would be replaced"
    out = tmp_path / "folder"
    (out / pdf.PDF_FOLDER).mkdir(parents=True)
    (out / MARKER).write_text("")  # (the grader's output folder, but the instructor's own feedback-pdf/ in it)
    assert not_ours(out) == [f"{pdf.PDF_FOLDER}/"]


def test_a_moodle_export_gives_each_students_full_name_as_moodle_wrote_it(tmp_path):
    from autograde.intake.collect import collect

    files = {"Alice Smith_123456_assignsubmission_file_/01-weighted-sum.ipynb": "",
             "Bob Jones_123457_assignsubmission_file_01-weighted-sum.ipynb": ""}
    found = collect(write_zip(tmp_path / "export.zip", files), tmp_path / "out" / "submitted", [FIRST])
    assert found.lms == "moodle"
    assert found.names == {"Alice-Smith": "Alice Smith", "Bob-Jones": "Bob Jones"}
    assert found.lms_ids == {"Alice-Smith": "123456", "Bob-Jones": "123457"}


def test_a_missing_chromium_is_said_before_anything_is_graded(tmp_path):
    submissions = tmp_path / "submissions" / "alice" / FIRST
    submissions.mkdir(parents=True)
    (submissions / f"{FIRST}.ipynb").write_text("{}")
    out = tmp_path / "out"
    status, stdout, stderr = run_main("grade", str(tmp_path / "submissions"), "--out", str(out), "--quiet", "--pdf",
                                      "--chromium", str(tmp_path / "no-chromium"))
    assert status == 2, (status, stdout, stderr)
    assert "--pdf needs Chromium" in stderr and "--chromium PATH" in stderr, stderr
    assert not out.exists(), "nothing may be graded (nor --out made) when the PDFs cannot be printed"


# ---------------------------------------------------------------------------------------------------------------------
# Slow: printing in Chromium


def passed_rows(student: str, assignment: str) -> list[CellResult]:
    return [CellResult(student, assignment, g, m, m, Status.PASSED, "") for g, m in graded_cells(assignment)]


@pytest.mark.slow
def test_maths_and_figures_are_printed_and_nothing_is_fetched_from_the_network(tmp_path, caplog):
    # Chapter 5's outline has maths in a heading ("Where attention's $n^2$ cost ..."): typeset as MathML.
    assignment = "05-transformer"
    pages = write_feedback(passed_rows("ada", assignment), tmp_path / "feedback")
    assert "<math" in pages[0].read_text(), "the page has no maths to print: choose a heading with some"
    report = write_report(passed_rows("ada", assignment), tmp_path / "report.html", 1.0, 1)
    # A page that asks for the network (none of the grader's does): refused, and said.
    online = tmp_path / "online.html"
    online.write_text('<p>remote</p><img src="https://example.com/x.png">')
    with caplog.at_level(logging.WARNING, logger="autograde"):
        printed = pdf.write_pdfs(tmp_path, {"ada": pages[0], "online": online}, report, {"ada": "77"},
                                 chromium=pdf.check_chromium())
    assert sorted(p.name for p in (tmp_path / pdf.PDF_FOLDER).iterdir()) == ["ada_77.pdf", "online.pdf"]
    text = pdf_text(printed.pdfs["ada"])
    assert squeezed("5. Where attention's n2 cost overtakes") in text and squeezed("$n^2$") not in text, \
        "the heading's maths must be typeset (n, then a raised 2), not printed as TeX"
    for line in page_lines(pages[0]):
        assert squeezed(line) in text, f"the PDF lacks the page's line {line!r}"
    # The figure is an SVG: printed as vector graphics, its titles and labels are text of the PDF.
    report_text = pdf_text(printed.report)
    for words in ("score distribution", "pass rate per test cell", "test_TinyGPT_loss"):
        assert squeezed(words) in report_text, f"the report's figure is not in its PDF: no {words!r}"
    assert any("https://example.com/x.png" in r.getMessage() and "refused" in r.getMessage() for r in caplog.records)
    assert printed.upload is None and not (tmp_path / pdf.MOODLE_ZIP).exists(), "a zip for Moodle only"


@pytest.mark.slow
def test_a_student_without_a_participant_id_is_left_out_of_moodles_zip_and_said(tmp_path, caplog):
    # (A roster student who handed in nothing has no participant id: Moodle could not file their PDF.)
    rows = passed_rows("ada", FIRST) + passed_rows("bea", FIRST)
    pages = {p.stem: p for p in write_feedback(rows, tmp_path / "feedback")}
    report = write_report(rows, tmp_path / "report.html", 1.0, 2)
    with caplog.at_level(logging.WARNING, logger="autograde"):
        printed = pdf.write_pdfs(tmp_path, pages, report, {"ada": "77"}, {"ada": "Ada Lovelace"}, lms="moodle",
                                 tabs=2)
    with zipfile.ZipFile(printed.upload) as archive:
        assert archive.namelist() == [f"Ada Lovelace_77_assignfeedback_file_/{pdf.MOODLE_FILE}"]
    assert printed.not_in_zip == ["bea"] and (tmp_path / pdf.PDF_FOLDER / "bea.pdf").is_file()
    assert any("bea" in r.getMessage() and pdf.MOODLE_ZIP in r.getMessage() for r in caplog.records)


@pytest.mark.slow
def test_a_chromium_that_does_not_start_is_said_before_anything_is_graded(tmp_path):
    with pytest.raises(pdf.ChromiumUnavailable, match="does not start"):
        pdf.check_chromium("/bin/false")


def _grade_moodle_with_pdfs(base: Path) -> dict:
    """Four students of a Moodle export graded with --pdf into ``out``, kept as ``printed``; then again without
    --pdf into ``out``: each run's output."""
    reference = nbformat.writes(completed_notebook(FIRST))
    mutant = nbformat.writes(completed_notebook(FIRST, {"softmax": MUTANT.read_text()}))
    files = {"Alice Smith_123456_assignsubmission_file_/01-weighted-sum.ipynb": reference,
             "Bob Jones_123457_assignsubmission_file_/01-weighted-sum.ipynb": mutant,
             "Carol White_123458_assignsubmission_onlinetext_/onlinetext.html": "<p>I could not do it</p>",
             "Dave Brown_123459_assignsubmission_file_/01-weighted-sum.ipynb": "this is not JSON"}
    export = write_zip(base / "CS101-Homework 01-5501.zip", files)
    first = grade_command(export, base / "out", "--assignment", FIRST, "--jobs", "1", "--pdf")
    if first.returncode == 0:
        shutil.copytree(base / "out", base / "printed")
    return {"printed": base / "printed", "out": base / "out", "first": first,
            "again": grade_command(export, base / "out", "--assignment", FIRST, "--jobs", "1")}


@pytest.mark.slow
@pytest.mark.sandbox
def test_pdf_feedback_of_a_moodle_export_through_the_grading_command():
    from tests.support.scenarios import kept

    run = kept("pdf-moodle", __file__, _grade_moodle_with_pdfs)
    out, proc = run["printed"], run["first"]
    assert proc.returncode == 0, proc.stderr
    students = {"Alice-Smith": "123456", "Bob-Jones": "123457", "Carol-White": "123458", "Dave-Brown": "123459"}
    assert sorted(p.name for p in (out / pdf.PDF_FOLDER).glob("*.pdf")) == \
        sorted(f"{s}_{i}.pdf" for s, i in students.items()), "one PDF per student, named by id and participant id"
    grades = grades_by_student(out)
    assert float(grades["Alice-Smith"]["score"]) == float(grades["Alice-Smith"]["max_score"]) > 0
    assert 0 < float(grades["Bob-Jones"]["score"]) < float(grades["Bob-Jones"]["max_score"]), "the mutant loses points"
    for student, participant in students.items():
        page = out / "feedback" / f"{student}.html"
        text = pdf_text(out / pdf.PDF_FOLDER / f"{student}_{participant}.pdf")
        lines = page_lines(page)
        assert any("points" in line for line in lines), f"no score line on {page}"
        for line in lines:
            assert squeezed(line) in text, f"{student}'s PDF lacks the feedback page's line {line!r}"
    bob = pdf_text(out / pdf.PDF_FOLDER / "Bob-Jones_123457.pdf")
    assert squeezed("subtract the maximum before exp") in bob, "the failed test's message is not in Bob's PDF"
    assert pdf_text(out / pdf.REPORT_PDF).startswith("Gradingreport"), "the report's PDF"

    with zipfile.ZipFile(out / pdf.MOODLE_ZIP) as archive:
        names = archive.namelist()
        assert sorted(names) == sorted(f"{n}_{i}_assignfeedback_file_/{pdf.MOODLE_FILE}" for n, i in [
            ("Alice Smith", "123456"), ("Bob Jones", "123457"), ("Carol White", "123458"), ("Dave Brown", "123459")])
        whose = {v: k for k, v in students.items()}
        for name in names:
            read = moodle_reads(name, set(students.values()))
            assert read is not None and read[1] == "assignfeedback_file", f"Moodle's importer would skip {name}"
            student = whose[read[0]]
            assert archive.read(name) == (out / pdf.PDF_FOLDER / f"{student}_{read[0]}.pdf").read_bytes(), \
                f"{name} is not {student}'s PDF"
    assert "feedback-pdf.zip" in proc.stdout and "printing PDFs" not in proc.stderr  # (--quiet: no bar)

    # A rerun without --pdf leaves no PDF of the last run beside grades that may have changed.
    out, proc = run["out"], run["again"]
    assert proc.returncode == 0, proc.stderr
    assert not (out / pdf.PDF_FOLDER).exists() and not (out / pdf.REPORT_PDF).exists() \
        and not (out / pdf.MOODLE_ZIP).exists(), "the last run's PDFs outlived it"


@pytest.mark.slow
@pytest.mark.sandbox
def test_pdf_feedback_of_a_canvas_export_is_named_by_student_and_canvas_user_id(tmp_path):
    # Files that are no notebooks: graded without a kernel, so only the naming and the printing are timed here.
    files = {"smithalice_12345_900001_01-weighted-sum.ipynb": "this is not JSON",
             "jonesbob_LATE_12346_900005_01-weighted-sum.ipynb": ""}
    out = tmp_path / "out"
    proc = grade_command(write_zip(tmp_path / "submissions.zip", files), out, "--assignment", FIRST, "--pdf")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (out / pdf.PDF_FOLDER).iterdir() if p.name != MARKER) == \
        ["jonesbob_12346.pdf", "smithalice_12345.pdf"]
    assert not (out / pdf.MOODLE_ZIP).exists(), "Moodle's zip for a Canvas export"
    assert (out / pdf.REPORT_PDF).is_file()


@pytest.mark.slow
def test_no_script_runs_while_printing(tmp_path):
    # The grader's pages have no script; one smuggled into a page (through text that escaped escaping) must not run.
    page = tmp_path / "smuggled.html"
    page.write_text("<p>the student's feedback</p><script>document.body.innerHTML = 'REWRITTEN BY A SCRIPT'</script>")
    pdf.print_pages([(page, tmp_path / "smuggled.pdf")], pdf.check_chromium())
    text = pdf_text(tmp_path / "smuggled.pdf")
    assert "thestudent'sfeedback" in text and "REWRITTEN" not in text, text
