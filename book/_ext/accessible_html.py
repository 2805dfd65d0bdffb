"""Give the theme's controls the names a screen reader needs (WCAG 2.1 A/AA as axe-core checks them).

The themes (pydata-sphinx-theme, sphinx-book-theme, myst-nb, sphinxcontrib-bibtex) write a few controls that
axe-core flags on every page; each fix here names a control or corrects a role, and removes no content:

- the sidebar's disclosure of a chapter's sections is a ``<summary>`` holding only an icon (no name): it is
  named after its chapter ("Sections of ...");
- a hidden code cell's ``<summary>`` is labelled "Toggle hidden content" while it shows "Show code cell source":
  the label goes, so the name is the text a reader sees (and speech input can say);
- the search field's button is labelled "Search" while it shows "Search Ctrl+K": the same; the colour-mode
  button's label becomes text inside it, hidden from sight;
- the bibliography's entries carry DPUB-ARIA's ``doc-biblioentry`` role, deprecated, inside a ``role="list"``
  that then has no list items: they become ``listitem``.

The HTML files are rewritten once the build has written them (the theme renders them after any hook that sees
the page's body), with patterns that match only the markup those packages write.
"""
import html
import re
from pathlib import Path

_SIDEBAR_TOGGLE = re.compile(
    r'(<a class="[^"]*reference internal[^"]*" href="[^"]*">\s*(?P<title>[^<]*?)\s*</a>\s*<details[^>]*>\s*)'
    r'<summary>(?=<span class="toctree-toggle")')
_FIXES = [
    (re.compile(r'<summary aria-label="Toggle hidden content">'), "<summary>"),
    (re.compile(r'(<button class="btn search-button-field[^"]*"[^>]*?) aria-label="Search"'), r"\1"),
    (re.compile(r'(<button class="[^"]*theme-switch-button[^"]*"[^>]*?) aria-label="Color mode"([^>]*>)'),
     r'\1\2<span class="visually-hidden">Color mode</span>'),
    (re.compile(r'role="doc-biblioentry"'), 'role="listitem"'),
]


def accessible(page: str) -> str:
    """The HTML `page` with the theme's unnamed or misnamed controls named, and the bibliography's roles fixed."""
    page = _SIDEBAR_TOGGLE.sub(
        lambda m: f'{m[1]}<summary aria-label="Sections of {html.escape(html.unescape(m["title"]), quote=True)}">',
        page)
    for pattern, replacement in _FIXES:
        page = pattern.sub(replacement, page)
    return page


def _rewrite(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    for path in Path(app.outdir).rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        fixed = accessible(text)
        if fixed != text:
            path.write_text(fixed, encoding="utf-8")


def setup(app):
    """Sphinx entry point."""
    app.connect("build-finished", _rewrite)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
