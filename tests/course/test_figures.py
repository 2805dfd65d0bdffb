"""The book's figures are drawn in colours every reader can tell from the white they are drawn on.

WCAG 2.1's success criterion 1.4.11 asks 3:1 contrast for the parts of a graphic that carry meaning (a line, a
marker, a bar's edge). Every page draws with the style book/course.mplstyle; these tests read the colours from
the pages' sources and the style, without building the book.
"""
import re

import matplotlib
import pytest
from matplotlib import colors

from autograde.course import REPO
from tests.support.colours import NON_TEXT_CONTRAST, contrast

PAGES = sorted((REPO / "book").glob("0*.md"))
STYLE = REPO / "book" / "course.mplstyle"


def style() -> dict:
    return matplotlib.rc_params_from_file(str(STYLE), use_default_template=False)


def test_contrast_is_wcags():
    assert contrast("white", "black") == pytest.approx(21.0)
    assert contrast("#767676", "white") == pytest.approx(4.54, abs=0.01)  # WCAG's usual example of the AA limit
    assert contrast("#FF800E", "white") < NON_TEXT_CONTRAST  # tableau-colorblind10's orange, which the style darkens


def test_every_colour_of_the_style_stands_out_from_the_background():
    params = style()
    background = params["axes.facecolor"]
    assert colors.to_hex(background) == colors.to_hex(params["figure.facecolor"]) == "#ffffff"
    cycle = params["axes.prop_cycle"].by_key()["color"]
    assert len(cycle) >= 6
    faint = {c: round(contrast(c, background), 2) for c in cycle if contrast(c, background) < NON_TEXT_CONTRAST}
    assert not faint, f"colours under {NON_TEXT_CONTRAST}:1 against the background: {faint}"
    assert len({colors.to_hex(c) for c in cycle}) == len(cycle), "a colour repeats in the cycle"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_page_draws_with_the_course_style(page):
    styles = re.findall(r"plt\.style\.use\(([^)]*)\)", page.read_text())
    assert styles == ['"course.mplstyle"'], f"{page.name} sets the styles {styles}, not the course's alone"


def colours_given(text: str) -> list[str]:
    """The colours a page's code passes to matplotlib as `color=` (lines, markers, arrows, text), as written (the
    pages' own helpers take a box's fill as `colour=`, drawn with a dark edge)."""
    return re.findall(r"""\bcolor\s*=\s*["']([^"']+)["']""", text)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_colour_a_page_names_stands_out_from_white(page):
    with matplotlib.rc_context(style()):  # (so that "C1" means the style's second colour)
        named = [c for c in colours_given(page.read_text()) if c != "white"]  # (white: marks on dark cells)
        faint = sorted({c for c in named if contrast(c, "white") < NON_TEXT_CONTRAST})
    assert not faint, f"{page.name} draws in colours under {NON_TEXT_CONTRAST}:1 against white: {faint}"


def test_the_page_check_finds_a_faint_colour():
    code = 'ax.plot(x, y, color="#FFBC79")\nax.text(0, 0, "a", color = ' + "'C0')"
    assert colours_given(code) == ["#FFBC79", "C0"]
