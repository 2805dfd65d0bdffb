"""A grade is earned only by knowing the answer (issue 19): hostile chapter 1 submissions through the real command.

The submissions (tests/support/integrity.py) are graded once, on their own, by
`python -m autograde grade` in the sandbox: a few notebooks, not the session's
big batch.
"""
import base64
import codecs
import html
import re
import zlib

import pytest

from autograde.course import cells_checking, graded_cell_ids
from tests.support.batches import grade_cached
from tests.support.integrity import (
    FIRST,
    FORGERIES,
    GUARD_ATTACKS,
    HUGE_ERROR_CHARS,
    disguised_leaks,
    disguised_submissions,
    hidden_test_lines,
    integrity_submissions,
    leaked_lines,
    page_text,
)
from tests.support.synthetic import write_submission


@pytest.fixture(scope="session")
def hostile(tmp_path_factory):
    """Grade every submission of tests/support/integrity.py; returns {"scores", "grades", "notes", "out"}.

    A cached batch (tests/support/batches.py): a rerun with nothing changed
    reuses the grader's kept results and writes the pages and tables again.
    """
    def write(folder):
        for student, nb in (integrity_submissions() | disguised_submissions()).items():
            write_submission(nb, folder, student, FIRST)

    # Chapter 1's cells take well under a second; 5 s keeps the real timeout (an answer that loops spends it) cheap.
    batch = grade_cached("integrity", write, tmp_path_factory.mktemp("integrity"), timeout=5)
    scores = {}
    for (student, _, grade_id), r in batch.scores.items():
        scores.setdefault(student, {})[grade_id] = r
    notes = {student: n for (student, _), n in batch.notes.items()}
    grades = {student: float(r["score"]) for (student, _), r in batch.grades.items()}
    return {"scores": scores, "grades": grades, "notes": notes, "out": batch.out}


# 1. Forged passes ------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("student", sorted(set(FORGERIES) - {"garbage"}))
def test_output_that_looks_like_a_verdict_earns_nothing(hostile, student):
    # The same garbage answers, with and without outputs that nbgrader alone would score as a pass.
    honest, forged = hostile["scores"]["garbage"], hostile["scores"][student]
    gained = {c: (honest[c]["score"], forged[c]["score"]) for c in honest
              if float(forged[c]["score"]) > float(honest[c]["score"])}
    assert not gained, f"{student} scores more than the same garbage without forged output: {gained}"
    assert hostile["grades"][student] == hostile["grades"]["garbage"]
    softmax = cells_checking("softmax", graded_cell_ids(FIRST))
    assert all(forged[c]["status"] in ("failed", "error") for c in softmax), {c: forged[c]["status"] for c in softmax}


@pytest.mark.slow
@pytest.mark.sandbox
def test_garbage_answers_score_little(hostile):
    # The baseline above is really wrong: it scores a few points at most (shape checks of exercises 8 and 9).
    assert hostile["grades"]["garbage"] <= 4, hostile["scores"]["garbage"]


# 2. Hidden tests read back ---------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.sandbox
def test_no_hidden_test_line_reaches_what_the_student_sees(hostile):
    out = hostile["out"]
    shown = {
        "feedback page": page_text(out / "feedback" / "reads-back.html"),
        "notes.csv": "\n".join(hostile["notes"].get("reads-back", [])),
        "scores.csv messages": "\n".join(r["message"] for r in hostile["scores"]["reads-back"].values()),
    }
    leaks = {where: lines[:3] for where, text in shown.items() if (lines := leaked_lines(text))}
    assert not leaks, f"hidden test lines shown to the student: {leaks}"


@pytest.mark.slow
@pytest.mark.sandbox
def test_the_read_back_attacks_did_run_and_found_no_test_in_the_kernel(hostile):
    # The attacks reached the grader (so the test above tests something), and what they read back is what the kernel
    # holds: their own cells and the grader's call of its agent. The tests run in the checker (issue 30), and
    # nadaraya_watson, which ends the kernel when its caller's source names an oracle, found none and gave its
    # correct answer.
    rows, notes = hostile["scores"]["reads-back"], hostile["notes"].get("reads-back", [])
    assert rows["test_softmax"]["status"] == "error" and rows["test_softmax"]["message"].startswith("ValueError")
    messages = " ".join(r["message"] for r in rows.values())
    assert "def _cell_sources" in messages, "the attack did not read back its own cell: did it run?"
    assert not any("kernel died" in n for n in notes), notes
    untouched = [c for c in rows if c.startswith(("test_gaussian", "test_temperature_", "test_nadaraya"))]
    assert all(rows[c]["status"] == "passed" for c in untouched), {c: rows[c]["status"] for c in untouched}


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_message_of_the_students_own_exception_is_one_short_line_with_its_frame(hostile):
    row = hostile["scores"]["reads-back"]["test_dot_scores"]
    assert row["status"] == "error" and "\n" not in row["message"] and len(row["message"]) <= 300, row
    page = (hostile["out"] / "feedback" / "reads-back.html").read_text()
    assert "In your code: <code>cell &#39;dot_scores&#39;, line 2, in dot_scores" in page
    # Every message on this page comes from an exception the student's code raised: one line each, bounded.
    messages = [html.unescape(m) for m in re.findall(r"<pre>(.*?)</pre>", page, re.DOTALL)]
    assert messages and not [m for m in messages if "\n" in m.strip() or len(m) > 300], messages[:2]


# 3. A kernel killed by a cell added at the top -------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.sandbox
def test_a_kernel_killed_by_an_added_cell_at_the_top_costs_nothing(hostile):
    rows = hostile["scores"]["dies-at-top"]
    assert {c: r["status"] for c, r in rows.items() if r["status"] != "passed"} == {}
    assert hostile["grades"]["dies-at-top"] == 23
    assert any("kernel died in cell number 1" in n for n in hostile["notes"]["dies-at-top"])


# 4. Spoofed timeouts ---------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.sandbox
def test_an_exception_named_like_the_graders_timeout_is_an_error(hostile):
    rows = hostile["scores"]["spoofs-timeout"]
    softmax = cells_checking("softmax", graded_cell_ids(FIRST))
    assert {rows[c]["status"] for c in softmax} <= {"error", "failed"}, {c: rows[c]["status"] for c in softmax}
    assert not [c for c, r in rows.items() if r["status"] == "timeout"], rows
    assert not [n for n in hostile["notes"].get("spoofs-timeout", []) if "time limit" in n]


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_real_timeout_is_still_recorded_where_the_cell_was_stopped(hostile):
    # An answer cell that defines a correct function and then loops: stopped at the limit, noted, its tests pass.
    rows = hostile["scores"]["loops-in-an-answer"]
    assert {r["status"] for r in rows.values()} == {"passed"}, {c: r["status"] for c, r in rows.items()}
    assert any("cosine_scores was stopped at the time limit" in n for n in hostile["notes"]["loops-in-an-answer"])


# 5. Hidden tests read back in disguise (red-team report, hole 6) -------------------------------------------

@pytest.mark.slow
@pytest.mark.sandbox
def test_no_hidden_test_line_reaches_anyone_in_disguise(hostile):
    # Capitals, look-alike letters, reversed lines: undone, they still spell no hidden line, on the student's page,
    # in the notes and messages, nor in the instructor's report (which quotes the notes: a dead kernel's last words).
    out, student = hostile["out"], "reads-back-disguised"
    shown = {
        "feedback page": page_text(out / "feedback" / f"{student}.html"),
        "report.html": page_text(out / "report.html"),
        "notes.csv": "\n".join(hostile["notes"].get(student, [])),
        "scores.csv messages": "\n".join(r["message"] for r in hostile["scores"][student].values()),
    }
    leaks = {where: found for where, text in shown.items() if (found := disguised_leaks(text))}
    assert not leaks, f"hidden test lines shown in disguise: {leaks}"


# 6. Attacks on the guard itself (the red team's review of issue 19) --------------------------------------------

@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.parametrize("student", sorted(GUARD_ATTACKS))
def test_an_attack_on_the_guard_earns_nothing(hostile, student):
    # The same garbage answers as "garbage", after the attack: not a point more, and softmax's tests still fail.
    honest, attacked = hostile["scores"]["garbage"], hostile["scores"][student]
    gained = {c: (honest[c]["score"], attacked[c]["score"]) for c in honest
              if float(attacked[c]["score"]) > float(honest[c]["score"])}
    assert not gained, f"{student} scores more than the same garbage without the attack: {gained}"
    softmax = cells_checking("softmax", graded_cell_ids(FIRST))
    assert all(attacked[c]["status"] in ("failed", "error") for c in softmax), \
        {c: attacked[c]["status"] for c in softmax}


# 7. Student text through the tests' helpers, and on the pages (red-team report, hole 6) ------------------

@pytest.mark.slow
@pytest.mark.sandbox
def test_a_message_given_to_the_tests_helper_by_student_code_is_one_short_line(hostile):
    rows = hostile["scores"]["reads-back-disguised"]
    through_helper = cells_checking("weighted_average", graded_cell_ids(FIRST))
    assert {rows[c]["status"] for c in through_helper} == {"failed"}, {c: rows[c]["status"] for c in through_helper}
    page = (hostile["out"] / "feedback" / "reads-back-disguised.html").read_text()
    messages = [html.unescape(m) for m in re.findall(r"<pre>(.*?)</pre>", page, re.DOTALL)]
    long = [m for m in messages if "\n" in m.strip() or len(m) > 300]
    assert messages and not long, f"{len(long)} messages of several lines or over 300 characters: {long[:1]}"
    assert "In your code: <code>cell &#39;weighted_average&#39;, line" in page, "the student's own line is not named"


@pytest.mark.slow
@pytest.mark.sandbox
def test_student_text_in_the_report_and_pages_is_escaped(hostile):
    # HTML in an exception's message (gaussian_scores's) reaches the student's page escaped. (The script tag was a
    # dead kernel's last words, for a caller whose source names an oracle: with the tests in the checker no caller
    # in the kernel does, and a dead kernel's note quotes nothing anyway.)
    notes = hostile["notes"].get("reads-back-disguised", [])
    assert not any("script" in n for n in notes), notes
    for page in (hostile["out"] / "report.html", hostile["out"] / "feedback" / "reads-back-disguised.html"):
        text = page.read_text()
        assert "<script>alert" not in text and "<b>not done" not in text, f"student HTML unescaped in {page.name}"
    page = (hostile["out"] / "feedback" / "reads-back-disguised.html").read_text()
    assert "&lt;b&gt;not done" in page, "the student's own exception message is not on the page, escaped"


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_huge_error_message_is_cut_as_it_arrives(hostile):
    # softmax raises an error of 5 million characters in each of its test cells (and in the cells that use it):
    # what the grader keeps and writes stays small, and the cells still fail.
    rows = hostile["scores"]["huge-error"]
    softmax = cells_checking("softmax", graded_cell_ids(FIRST))
    assert all(rows[c]["status"] in ("failed", "error") for c in softmax), {c: rows[c]["status"] for c in softmax}
    written = {p.relative_to(hostile["out"]): p.stat().st_size
               for p in hostile["out"].rglob("*") if p.is_file() and "huge-error" in str(p)}
    assert written, "nothing of huge-error was written: the test looks in the wrong place"
    # Less than one copy of the message: the current grader wrote it several times per cell.
    assert sum(written.values()) < HUGE_ERROR_CHARS, f"huge-error's files hold {sum(written.values()):,} bytes: {written}"


# 8. The leak check reads what a student could decode (issue 30) ---------------------------------------------

def _shape_of(text: str) -> str:
    return "expected shape (4, 3), got shape " + str(tuple(text.encode()))


@pytest.mark.parametrize(("how", "encode"), [
    ("rot13", lambda line: codecs.encode(line, "rot13")),
    ("every other character", lambda line: "".join(c + "~" for c in line)),
    ("hex", lambda line: line.encode().hex()),
    ("base64, then zlib", lambda line: base64.b64encode(zlib.compress(line.encode())).decode()),
    ("base64, then zlib", lambda line: base64.b64encode(line.encode()).decode()),
    ("integers as bytes", _shape_of),
])
def test_the_leak_check_finds_a_hidden_line_however_it_was_encoded(how, encode):
    # (So that "no hidden line leaked" means something: each encoding of issue 30's list is read back.)
    line = max(hidden_test_lines(), key=len)
    page = f"<p>Your code raised an error: ValueError: {encode(line)}</p>"
    found = disguised_leaks(page)
    assert how in found and found[how], f"{how} not decoded: {sorted(found)}"
    assert not disguised_leaks("<p>softmax: expected 0.25, got 1.0 at index (0,)</p>"), "honest text read as a leak"
