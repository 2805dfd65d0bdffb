"""What an executed book page computed: the values it glued into its prose and the text it printed.

A page states a measured number in its prose with myst-nb's `glue` (`glue("name", value, display=False)` in a
code cell, `` {glue:text}`name:.2f` `` in the text), so the number a reader sees is the one the code printed.
The tests of `tests/course/test_book.py` read those values back from the build's execution cache and check that the
claims the prose and the captions make about them hold.
"""
import ast

from jupyter_cache import get_cache
from myst_nb.core.read import read_myst_markdown_notebook

from autograde.course import REPO

CACHE = REPO / "_build" / ".jupyter_cache"


def executed_page(assignment):
    """The executed notebook of `book/<assignment>.md` as the last book build left it in its cache.

    Call it only after the `book` fixture has built the book; a page whose source changed since is not in the
    cache, which is an error rather than a silent read of stale numbers.
    """
    page = REPO / "book" / f"{assignment}.md"
    cache = get_cache(str(CACHE))
    try:  # matched by content, as myst-nb matches it: wherever the cache was filled (another clone, a worktree)
        record = cache.match_cache_notebook(read_myst_markdown_notebook(page.read_text(), path=str(page)))
    except KeyError:
        raise AssertionError(f"book/{assignment}.md has no executed copy in {CACHE} that matches its source") from None
    return cache.get_cache_bundle(record.pk).nb


def glued(assignment):
    """{name: value} of every value the page glued; numbers, tuples, lists and dicts come back as Python values."""
    return glued_from(executed_page(assignment))


def glued_from(notebook):
    """{name: value} of every value an executed notebook glued (myst-nb's scrapbook outputs)."""
    values = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            scrap = output.get("metadata", {}).get("scrapbook")
            if not scrap:
                continue
            text = output["data"].get(scrap.get("mime_prefix", "") + "text/plain", "")
            try:
                values[scrap["name"]] = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                values[scrap["name"]] = text
    return values


def printed(assignment):
    """Everything the page's code cells printed to stdout, in order, as one string."""
    return "".join(output.get("text", "") for cell in executed_page(assignment).cells
                   for output in cell.get("outputs", [])
                   if output.get("output_type") == "stream" and output.get("name") == "stdout")
