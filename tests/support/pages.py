"""Reading the grader's HTML pages (report, feedback) as a reader sees them: tables of cell texts."""
from __future__ import annotations

from html.parser import HTMLParser


class _Tables(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self._row = []
            self.tables[-1].append(self._row)
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr":
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def tables(page: str) -> list[list[list[str]]]:
    """Every table of an HTML page: a list of rows, each a list of the visible texts of its cells (tags removed,
    entities decoded, white space collapsed)."""
    parser = _Tables()
    parser.feed(page)
    parser.close()
    return parser.tables


def table_with(page: str, header: list[str]) -> list[list[str]]:
    """The rows (header row excluded) of the first table of `page` whose header row starts with `header`."""
    for table in tables(page):
        if table and table[0][:len(header)] == header:
            return table[1:]
    raise AssertionError(f"no table with the header {header} on the page")


class _Blocks(HTMLParser):
    """The text of each element of the given tags, with the class of the element."""

    def __init__(self, tags: set[str]):
        super().__init__(convert_charrefs=True)
        self.tags, self.found, self._open = tags, [], []

    def handle_starttag(self, tag, attrs):
        if tag in self.tags:
            self._open.append((tag, dict(attrs).get("class", ""), []))

    def handle_endtag(self, tag):
        if self._open and self._open[-1][0] == tag:
            tag, css, text = self._open.pop()
            self.found.append((tag, css, " ".join("".join(text).split())))

    def handle_data(self, data):
        for _, _, text in self._open:
            text.append(data)


def blocks(page: str, *tags: str) -> list[tuple[str, str, str]]:
    """(tag, class, visible text) of every element of `tags` on `page`, in the order they close."""
    parser = _Blocks(set(tags))
    parser.feed(page)
    parser.close()
    return parser.found
