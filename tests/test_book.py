"""The book builds strictly, shows the exercise notebooks unexecuted, and leaks no solution."""
import html
import re
from pathlib import Path

import pytest

from autograde.course import assignment_ids
from tests.support.leaks import secret_lines

pytestmark = [pytest.mark.book, pytest.mark.slow]  # builds the book: executes every chapter (cached)


def page_text(path: Path) -> str:
    """The visible text of an HTML page, tags removed and entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text()))


@pytest.mark.parametrize("assignment", assignment_ids())
def test_chapter_and_exercise_pages_exist(book, assignment):
    chapter = book / "book" / f"{assignment}.html"
    exercise = book / "exercises" / assignment / f"{assignment}.html"
    assert chapter.is_file() and exercise.is_file()
    page = exercise.read_text()
    # The download button offers the student notebook itself.
    assert f'_sources/exercises/{assignment}/{assignment}.ipynb"' in page
    assert (book / "_sources" / "exercises" / assignment / f"{assignment}.ipynb").is_file()
    # Shown as students get it: not executed, so no NotImplementedError output.
    assert "NotImplementedError</span>:" not in page and 'class="cell_output' not in page


@pytest.mark.parametrize("assignment", assignment_ids())
def test_chapter_is_executed_with_figures_that_have_alt_text(book, assignment):
    page = (book / "book" / f"{assignment}.html").read_text()
    images = re.findall(r"<img [^>]*>", page)
    figures = [i for i in images if "_images/" in i]
    assert len(figures) >= 4, f"expected a figure for each key idea, found {len(figures)}"
    missing = [i for i in figures if not re.search(r'alt="[^"]{20,}"', i)]
    assert not missing, f"figures without alt text: {missing}"
    assert 'class="cell_output' in page, "no executed output on the chapter page"
    assert "Traceback" not in page_text(book / "book" / f"{assignment}.html")


def test_no_solution_line_in_the_book(book):
    secrets = [line for a in assignment_ids() for line in secret_lines(a)]
    pages = {p: page_text(p) for p in book.rglob("*.html")}
    sources = {p: p.read_text() for p in (book / "_sources").rglob("*") if p.is_file()}
    for path, text in {**pages, **sources}.items():
        leaked = [line for line in secrets if line in text]
        assert not leaked, f"{path} shows solution or hidden-test lines: {leaked[:3]}"
        assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text, path


def test_instructor_material_is_not_in_the_book(book):
    for folder in ("solutions", "autograde", "tests"):
        assert not (book / folder).exists(), f"{folder}/ was built into the book"
        assert not (book / "_sources" / folder).exists()


def test_bibliography_lists_the_cited_papers(book):
    text = page_text(book / "book" / "references.html")
    for author in ("Nadaraya", "Watson", "Vaswani", "Bridle"):
        assert author in text


def test_maths_is_typeset_from_the_build_not_a_cdn(book):
    """Offline readers (a train, an exam room) get typeset maths: MathJax is served from the book itself."""
    pages = list(book.rglob("*.html"))
    remote = [p for p in pages if re.search(r'<script[^>]+src="https?://[^"]*mathjax', p.read_text())]
    assert not remote, f"pages that load MathJax from the network: {remote[:3]}"
    local = [p for p in pages if 'src="../_static/mathjax/tex-mml-chtml.js' in p.read_text()]
    assert local, "no page loads the MathJax served from _static/mathjax"
    assert (book / "_static" / "mathjax" / "tex-mml-chtml.js").is_file()
    assert list((book / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))


def test_no_page_points_a_script_style_or_image_at_the_network(book):
    """Offline also for what loads later: no tag fetches from the web, and no inline script names a URL to fetch.

    The browser test sees what a page loads; this sees loaders that wait for a click (thebe's CDN bundle did).
    Links a reader follows (<a href>) are fine.
    """
    remote_tag = re.compile(r'<(?:script|link|img|iframe|source|video|audio|embed)\b[^>]*\b(?:src|href)="(https?://[^"]*)"')
    inline_script = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.S)
    found = []
    for page in book.rglob("*.html"):
        text = page.read_text()
        urls = remote_tag.findall(text) + [u for s in inline_script.findall(text) for u in re.findall(r"https?://[^\s\"'<]+", s)]
        found += [f"{page.relative_to(book)}: {u}" for u in urls]
    for sheet in book.rglob("*.css"):
        found += [f"{sheet.relative_to(book)}: {u}" for u in re.findall(r"url\(\s*['\"]?(https?://[^)'\"]+)", sheet.read_text())]
    assert not found, "the book fetches from the network:\n" + "\n".join(found[:20])
