"""Unit tests of the feedback page and the report (no kernel): from rows to HTML, escaped, and readable offline."""
import re
from html.parser import HTMLParser

from autograde.classify import CellResult, Status
from autograde.feedback import feedback_context, write_feedback
from autograde.report import write_report

HOSTILE = "<script>alert('x')</script> & friends"


def rows():
    return [
        CellResult("ann", "01-a", "test_softmax", 1.0, 1.0, Status.PASSED, ""),
        CellResult("ann", "01-a", "test_softmax_stability", 0.0, 2.0, Status.FAILED, f"AssertionError: {HOSTILE}"),
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


def test_feedback_gets_structured_data_per_test_cell():
    context = feedback_context("ann", [r for r in rows() if r.student_id == "ann"],
                               {("ann", "01-a"): ["a copied cell was run as ordinary code"]}, "4242")
    first, second = context["assignments"]
    assert (context["student"], context["lms_id"]) == ("ann", "4242")
    assert (first["assignment"], first["score"], first["max_score"]) == ("01-a", 1.0, 3.0)
    assert first["notes"] == ["a copied cell was run as ordinary code"] and second["notes"] == []
    assert first["cells"][1] == {"grade_id": "test_softmax_stability", "points": 0.0, "max": 2.0, "status": "failed",
                                 "meaning": Status.FAILED.meaning, "message": f"AssertionError: {HOSTILE}"}


def test_feedback_pages_show_points_statuses_messages_and_notes_escaped(tmp_path):
    written = write_feedback(rows(), tmp_path, {("ann", "01-a"): ["the test cell 'x' had been edited"]}, {"ann": "4242"})
    assert sorted(p.name for p in written) == ["ann.html", "bob.html"]
    page = (tmp_path / "ann.html").read_text()
    parsed = parse(page)
    text = " ".join(parsed.text)
    assert "script" not in parsed.tags, "a message became markup"
    assert HOSTILE in text and "LMS user id: 4242" in text
    assert "01-a: 1 / 3 points" in text and "02-b: 0 / 1 points" in text
    assert "the test cell 'x' had been edited" in text and "About your notebook" in text
    assert re.search(r'<td>test_softmax_stability</td><td>0 / 2</td><td class="failed">a test found a mistake</td>', page)
    assert "About your notebook" not in (tmp_path / "bob.html").read_text()
    assert "LMS user id" not in (tmp_path / "bob.html").read_text()


def test_the_report_counts_statuses_and_needs_no_network(tmp_path):
    notes = {("ann", "01-a"): [HOSTILE]}
    page = write_report(rows(), tmp_path / "report.html", 12.0, 3, notes).read_text()
    parsed = parse(page)
    assert "script" not in parsed.tags
    assert parsed.links and all(link.startswith("data:image/png;base64,") for link in parsed.links)
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
