"""Unit tests of the feedback page and the report (no kernel): from rows to HTML, escaped, and readable offline."""
import base64
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

import pytest
from markupsafe import escape

from autograde.pages import feedback
from autograde.pages.feedback import feedback_context, write_feedback
from autograde.pages.outline import Check, Exercise
from autograde.pages.report import write_report
from autograde.results.classify import CellResult, Status

HOSTILE = "<script>alert('x')</script> & friends"


def rows():
    return [
        CellResult("ann", "01-a", "test_softmax", 1.0, 1.0, Status.PASSED, ""),
        CellResult("ann", "01-a", "test_softmax_stability", 0.0, 2.0, Status.FAILED, f"AssertionError: {HOSTILE}",
                   f"{HOSTILE}\nrow 0 sums to 2.0", "cell 'softmax', line 3: return e / e.sum(axis=2)"),
        CellResult("ann", "02-b", "test_mask", 0.0, 1.0, Status.TIMEOUT, "the cell ran longer than the time limit"),
        CellResult("bob", "01-a", "test_softmax", 0.0, 1.0, Status.MISSING, "no notebook"),
        CellResult("bob", "01-a", "test_softmax_stability", 0.0, 2.0, Status.MISSING, "no notebook"),
        CellResult("bob", "02-b", "test_mask", 0.0, 1.0, Status.CRASHED, "the kernel died"),
    ]


class Text(HTMLParser):
    """The text of a page, tags left out, and the values of its src and href attributes."""

    def __init__(self):
        super().__init__()
        self.text, self.links, self.tags = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.links += [value for name, value in attrs if name in ("src", "href")]

    def handle_data(self, data):
        self.text.append(data)


def parse(page: str) -> Text:
    parser = Text()
    parser.feed(page)
    return parser


def outline_of(assignment):
    """A made-up course: 01-a has one exercise of two tests, 02-b one of one test."""
    return {
        "01-a": ("Exercise 1: things", [Exercise("1", "Softmax", 3.0, [
            Check("test_softmax", 1.0, "Shape and one worked example.", "visible"),
            Check("test_softmax_stability", 2.0, "Large inputs neither overflow nor underflow.", "hidden")])]),
        "02-b": ("Exercise 2: masks", [Exercise("1", "Masks", 1.0, [Check("test_mask", 1.0, "Masks hide keys.", "hidden")])]),
    }[assignment]


def test_feedback_groups_each_assignment_by_exercise_with_what_each_test_checks():
    context = feedback_context("ann", [r for r in rows() if r.student_id == "ann"],
                               {("ann", "01-a"): ["Your notebook has a copy of the test cell 'x'."]}, "4242", outline_of)
    first, second = context["assignments"]
    assert (context["student"], context["lms_id"]) == ("ann", "4242")
    assert (first["title"], first["score"], first["max_score"], first["missing"]) == ("Exercise 1: things", 1.0, 3.0, False)
    assert first["notes"] == ["Your notebook has a copy of the test cell 'x'."] and second["notes"] == []
    [softmax] = first["exercises"]
    assert (softmax["heading"], softmax["score"], softmax["max_score"], softmax["lost"]) == ("1. Softmax", 1.0, 3.0, 2.0)
    passed, lost = softmax["tests"]
    assert (passed["description"], passed["hidden"], passed["passed"]) == ("Shape and one worked example.", False, True)
    assert (lost["description"], lost["hidden"], lost["passed"]) == ("Large inputs neither overflow nor underflow.", True, False)
    # The test's whole message, without the exception's name (the words are the test's), and the student's line.
    assert lost["message"] == f"{HOSTILE}\nrow 0 sums to 2.0"
    assert lost["where"] == "cell 'softmax', line 3: return e / e.sum(axis=2)"
    assert [e["heading"] for e in first["revisit"]] == ["1. Softmax"]
    assert second["exercises"][0]["tests"][0]["why"].startswith("This ran longer than the time limit")


def test_revisit_first_lists_the_exercises_that_lost_most_and_unknown_tests_are_kept():
    def outline(assignment):
        return "A", [Exercise(str(n), f"E{n}", float(n), [Check(f"test_{n}", float(n), f"Check number {n}.", "visible")])
                     for n in (1, 2, 3, 4)]
    own = [CellResult("ann", "a", f"test_{n}", 0.0 if n > 1 else 1.0, float(n), Status.FAILED if n > 1 else Status.PASSED, "")
           for n in (1, 2, 3, 4)] + [CellResult("ann", "a", "test_extra", 0.0, 1.0, Status.ERROR, "ValueError: x")]
    [a] = feedback_context("ann", own, course_outline=outline)["assignments"]
    assert [e["heading"] for e in a["revisit"]] == ["4. E4", "3. E3", "2. E2"]  # most points lost first, three at most
    assert a["exercises"][-1]["heading"] == "Other tests"
    assert a["exercises"][-1]["tests"][0]["description"] == "Test test_extra"


def test_feedback_pages_show_summary_exercises_messages_and_notes_escaped(tmp_path, monkeypatch):
    monkeypatch.setattr(feedback, "_course_outline", outline_of)
    written = write_feedback(rows(), tmp_path, {("ann", "01-a"): ["The test cell 'x' had been edited."]}, {"ann": "4242"})
    assert sorted(p.name for p in written) == ["ann.html", "bob.html"]
    page = (tmp_path / "ann.html").read_text()
    parsed = parse(page)
    text = " ".join(" ".join(parsed.text).split())
    assert "script" not in parsed.tags, "a message became markup"
    assert "LMS user id: 4242" in text
    assert "Exercise 1: things: 1 / 3 points" in text and "Exercise 2: masks: 0 / 1 points" in text
    assert "Revisit first: 1. Softmax : 2 of 3 points lost" in text
    assert 'href="#01-a-exercise-1"' in page and 'id="01-a-exercise-1"' in page  # the link leads somewhere
    assert "Large inputs neither overflow nor underflow. (hidden test, 0 / 2)" in text
    assert f"<pre>{escape(HOSTILE)}\nrow 0 sums to 2.0</pre>" in page  # the whole message, its lines kept
    assert "In your code: cell 'softmax', line 3: return e / e.sum(axis=2)" in text
    assert "About your notebook The test cell 'x' had been edited." in text
    assert "test_softmax_stability" not in text, "the page speaks of checks, not of grade ids"
    bob = " ".join(" ".join(parse((tmp_path / "bob.html").read_text()).text).split())
    assert "No notebook of yours was graded for this assignment" in bob
    assert "Shape and one worked example." not in bob, "a missing notebook lists no checks"
    assert "About your notebook" not in bob and "LMS user id" not in bob


def test_the_report_counts_statuses_and_needs_no_network(tmp_path):
    notes = {("ann", "01-a"): [HOSTILE]}
    page = write_report(rows(), tmp_path / "report.html", 12.0, 3, notes).read_text()
    parsed = parse(page)
    assert "script" not in parsed.tags
    assert parsed.links and all(link.startswith("data:image/svg+xml;base64,") for link in parsed.links)
    assert len(parsed.links) == 2  # one figure per assignment
    assert not re.search(r"https?://", page)
    statuses = dict(re.findall(r'<td class="(\w+)">\1</td><td>[^<]*</td><td>(\d+)</td>', page))
    assert statuses == {"passed": "1", "failed": "1", "timeout": "1", "missing": "2", "crashed": "1"}
    text = " ".join(parsed.text)
    assert "2 students, 2 assignments: 3 notebooks handed in, 1 missing." in " ".join(text.split())
    assert "4.0 s per notebook" in text
    section = page.split("<h2>01-a</h2>")[1].split("<h2>")[0]
    assert "1 notebook handed in" in section and "1 missing, scored 0: bob" in section
    assert "test_softmax_stability (0% pass)" in section
    assert HOSTILE in text  # the notes table


def report_svg(*args) -> ElementTree.Element:
    """The report's figure for `args` (as :func:`autograde.pages.report._figure` takes them), parsed."""
    from autograde.pages.report import _figure

    uri = _figure(*args)
    assert uri.startswith("data:image/svg+xml;base64,")
    return ElementTree.fromstring(base64.b64decode(uri.split(",", 1)[1]))


SVG = "{http://www.w3.org/2000/svg}"


def test_every_bar_of_the_report_stands_out_from_its_background():
    # WCAG 2.1's 1.4.11: 3:1 for what carries meaning in a graphic; the report's style once offered a 2.5:1 orange.
    from tests.support.colours import NON_TEXT_CONTRAST, contrast

    svg = report_svg([1.0, 2.0, 2.0, 3.5], 4.0, ["test_a", "test_b"], [0.25, 0.75])
    rects = [r for r in svg.iter(f"{SVG}rect") if r.get("fill") not in (None, "none")]
    background, bars = rects[0].get("fill"), rects[1:]
    assert float(rects[0].get("width")) == float(svg.get("width")), "the first rectangle must be the background"
    assert len(bars) >= 3
    faint = {round(contrast(b.get("fill"), background), 2) for b in bars
             if contrast(b.get("fill"), background) < NON_TEXT_CONTRAST}
    assert not faint, f"bars drawn at {faint}:1 against the figure's background, under {NON_TEXT_CONTRAST}:1"


def test_the_reports_bars_show_the_histogram_and_the_pass_rates():
    # Scores in 5 bins over [0, 4], the last one closed as Matplotlib's hist counts: numpy's histogram is the oracle.
    import numpy as np

    scores, top, rates = [0.0, 1.0, 2.0, 2.0, 3.5, 4.0, 4.0], 4.0, [0.25, 1.0, 0.0]
    svg = report_svg(scores, top, ["test_a", "test_b", "test_c"], rates)
    histogram_panel, rate_panel = svg.findall(f"{SVG}g")
    frame = next(r for r in histogram_panel.iter(f"{SVG}rect") if r.get("fill") == "none")
    bottom = float(frame.get("y")) + float(frame.get("height"))
    bars = sorted((float(b.get("x")), float(b.get("height"))) for b in histogram_panel.iter(f"{SVG}rect")
                  if b.get("fill") not in (None, "none"))
    expected, _ = np.histogram(scores, bins=5, range=(0, top))
    heights = dict(bars)
    unit = max(heights.values()) / expected.max()
    width = float(frame.get("width")) / 5
    drawn = [round(heights.get(round(float(frame.get("x")) + i * width, 1), 0.0) / unit) for i in range(5)]
    assert drawn == expected.tolist(), f"bars of heights {drawn} for the histogram {expected.tolist()}"
    assert all(float(b.get("y")) + float(b.get("height")) == pytest.approx(bottom, abs=0.2)
               for b in histogram_panel.iter(f"{SVG}rect") if b.get("fill") not in (None, "none"))
    frame = next(r for r in rate_panel.iter(f"{SVG}rect") if r.get("fill") == "none")
    widths = {round(float(b.get("y"))): float(b.get("width")) / float(frame.get("width"))
              for b in rate_panel.iter(f"{SVG}rect") if b.get("fill") not in (None, "none")}
    assert sorted(round(w, 3) for w in widths.values()) == [0.25, 1.0], "a bar per passing share, none for 0"
    # Top to bottom in the order given, each label beside its own bar.
    labels = {t.text: float(t.get("y")) for t in rate_panel.iter(f"{SVG}text") if t.text and t.text.startswith("test_")}
    assert labels["test_a"] < labels["test_b"] < labels["test_c"]
    bar_of = {round(w, 3): y for y, w in widths.items()}
    assert abs(bar_of[0.25] - labels["test_a"]) < abs(bar_of[0.25] - labels["test_b"])
    assert abs(bar_of[1.0] - labels["test_b"]) < abs(bar_of[1.0] - labels["test_a"])


def test_a_test_cells_name_in_the_figure_is_escaped():
    svg = report_svg([1.0], 2.0, ["test_<b>&"], [0.5])
    assert "test_<b>&" in [t.text for t in svg.iter(f"{SVG}text")]


def test_a_notebook_that_could_not_be_graded_is_explained_once(tmp_path, monkeypatch):
    monkeypatch.setattr(feedback, "_course_outline", outline_of)
    why = "the submitted file is not a notebook (not valid JSON: Expecting value)"
    own = [CellResult("cat", "01-a", g, 0.0, m, Status.ERROR, why) for g, m in (("test_softmax", 1.0),
                                                                                 ("test_softmax_stability", 2.0))]
    [a] = feedback_context("cat", own)["assignments"]
    assert a["not_graded"] == why and not a["missing"]
    page = write_feedback(own, tmp_path)[0].read_text()
    assert page.count(why) == 1, "said once, not once per check"
    assert "Your notebook could not be graded" in page and "Large inputs neither" not in page
    # Two checks failing for different reasons are not a notebook-wide outcome.
    own[1] = CellResult("cat", "01-a", "test_softmax_stability", 0.0, 2.0, Status.ERROR, "ValueError: another")
    assert feedback_context("cat", own)["assignments"][0]["not_graded"] == ""


def test_an_undefined_name_is_explained_with_its_likely_cause(monkeypatch):
    monkeypatch.setattr(feedback, "_course_outline", outline_of)
    own = [CellResult("dan", "01-a", "test_softmax", 0.0, 1.0, Status.ERROR, "NameError: name 'softmax' is not defined",
                      "name 'softmax' is not defined"),
           CellResult("dan", "01-a", "test_softmax_stability", 2.0, 2.0, Status.PASSED, "")]
    [check, _] = feedback_context("dan", own)["assignments"][0]["exercises"][0]["tests"]
    assert check["why"].startswith("The check could not run: softmax is not defined. Is the cell that defines it done")


def test_maths_is_typeset_and_long_floats_are_rounded_on_a_feedback_page(tmp_path):
    # Chapter 5's exercise headings hold TeX ("$n^2$"); a float32 answer's message holds float noise.
    assignment = "05-transformer"
    _, exercises = feedback._course_outline(assignment)
    with_tex = [e for e in exercises if "$" in e.title]
    assert with_tex, "no exercise heading of chapter 5 holds maths any more: pick another page for this test"
    noisy = "AssertionError: the loss is 0.019999999552965164, expected 0.0200001 (row 12345678901, x_1.23456789)"
    own = [CellResult("eve", assignment, t.grade_id, 0.0, t.points, Status.FAILED, noisy, noisy.split(": ", 1)[1])
           for e in exercises for t in e.tests]
    page = write_feedback(own, tmp_path, {("eve", assignment): ["a note about 0.30000000000000004"]})[0].read_text()
    headings = re.findall(r"<h[23][^>]*>(.*?)</h[23]>", page, re.DOTALL)
    assert headings and not [h for h in headings if "$" in h], "raw TeX left in a heading"
    assert "<msup><mi>n</mi><mn>2</mn></msup>" in page, "$n^2$ is not typeset as MathML"
    assert not re.search(r"https?://(?!www\.w3\.org/1998/Math/MathML)", page), "the page needs the network"
    text = " ".join(" ".join(parse(page).text).split())
    assert "0.019999999552965164" not in text and "the loss is 0.02, expected 0.0200001" in text
    assert "row 12345678901, x_1.23456789" in text, "integers and names must not change"
    assert "a note about 0.3" in text and "0.30000000000000004" not in text


def test_no_raw_tex_is_left_in_any_chapters_headings_or_descriptions(tmp_path):
    from autograde.course import assignment_ids

    for assignment in assignment_ids():
        _, exercises = feedback._course_outline(assignment)
        own = [CellResult("eve", assignment, t.grade_id, 0.0, t.points, Status.FAILED, "AssertionError: x")
               for e in exercises for t in e.tests]
        page = write_feedback(own, tmp_path / assignment)[0].read_text()
        shown = re.findall(r"<h[23][^>]*>(.*?)</h[23]>|<li class=\"lost\">(.*?)<span", page, re.DOTALL)
        left = [part for found in shown for part in found if "$" in part]
        assert not left, f"{assignment}: raw TeX left on the feedback page: {left[:3]}"


@pytest.mark.browser
def test_chromium_typesets_the_maths_of_a_feedback_page_offline(tmp_path):
    # MathML Core is rendered by Chromium itself: no script, no font download, no network.
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    assert Path(chromium).is_file(), f"no chromium at {chromium}: sudo apt-get install chromium (make test does, as root)"
    assignment = "05-transformer"
    _, exercises = feedback._course_outline(assignment)
    own = [CellResult("eve", assignment, t.grade_id, 0.0, t.points, Status.FAILED, "AssertionError: x")
           for e in exercises for t in e.tests]
    page_path = write_feedback(own, tmp_path)[0]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium)
        try:
            page = browser.new_page()
            requests = []
            page.on("request", lambda r: requests.append(r.url) if not r.url.startswith("file:") else None)
            page.goto(page_path.as_uri())
            facts = page.evaluate("""() => {
                const h = [...document.querySelectorAll('h3')].find(e => e.querySelector('math'));
                const m = h && h.querySelector('math msup');
                const box = m ? m.getBoundingClientRect() : null;
                return {heading: h ? h.textContent : null, width: box ? box.width : 0, height: box ? box.height : 0,
                        display: m ? getComputedStyle(m).display : null};
            }""")
        finally:
            browser.close()
    assert facts["heading"] and "$" not in facts["heading"], facts
    assert facts["width"] > 0 and facts["height"] > 0, f"the formula takes no room: not typeset ({facts})"
    assert facts["display"] == "block math", f"Chromium does not lay the formula out as MathML ({facts})"
    assert requests == [], f"the page asked the network for {requests}"
