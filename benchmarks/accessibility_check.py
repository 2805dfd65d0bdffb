"""What axe-core's check of each built page costs, run whole and as the browser test runs it (not a test).

    .venv/bin/python -m benchmarks.accessibility_check [--repeat 3] [PAGE ...]   (build the book first)

Opens each page of ``_build/html`` (or the PAGEs given, relative to it) in
headless Chromium at desktop width, as ``tests/course/test_browser.py`` does,
and times, best of `--repeat`, axe-core's WCAG 2.1 A/AA rules run on the whole
page at once and ``_axe_violations`` (the test's check: the colour-contrast
rule judges one token of each kind in code blocks). It prints both times per
page and their totals, and the violations each found, which must be the same:
the script exits 1 where they differ.
"""
from __future__ import annotations

import argparse
import sys
import time
from importlib.resources import files

from playwright.sync_api import sync_playwright

from autograde.course import REPO
from tests.course.test_browser import AXE_TAGS, CHROMIUM, DESKTOP, Tab, _axe_violations, book_pages, label

HTML = REPO / "_build" / "html"


def whole_page(page) -> list[str]:
    """axe-core's WCAG 2.1 A/AA violations of the open page, every rule on every element: one line per rule."""
    page.evaluate((files("axe_playwright_python") / "axe.min.js").read_text())
    result = page.evaluate("async (tags) => await axe.run(document, {runOnly: {type: 'tag', values: tags}, "
                           "resultTypes: ['violations'], preload: false})", AXE_TAGS)
    return sorted(f"{v['id']} ({len(v['nodes'])} element(s))" for v in result["violations"])


def sampled(page) -> list[str]:
    """The browser test's check of the open page, in the form :func:`whole_page` gives."""
    return sorted(line.split(", e.g.")[0] + ")" for line in _axe_violations(page))


def best_time(tab: Tab, url: str, check, repeat: int) -> tuple[float, list[str]]:
    """The best of `repeat` times of `check` on the page at `url`, each on a fresh load, and what it found."""
    times = []
    for _ in range(repeat):
        tab.open(url)
        start = time.perf_counter()
        found = check(tab.page)
        times.append(time.perf_counter() - start)
    return min(times), found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("pages", nargs="*", help="pages relative to _build/html (default: every page)")
    args = parser.parse_args()
    pages = [HTML / p for p in args.pages] if args.pages else book_pages(HTML)
    totals, differ = [0.0, 0.0], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        tab = Tab(browser, DESKTOP)
        print(f"{'page':60} {'whole':>8} {'sampled':>8}  (seconds, best of {args.repeat})")
        for page in pages:
            (whole_s, whole_found), (sampled_s, sampled_found) = (
                best_time(tab, page.as_uri(), check, args.repeat) for check in (whole_page, sampled))
            totals[0] += whole_s
            totals[1] += sampled_s
            same = whole_found == sampled_found
            print(f"{label(page, HTML):60} {whole_s:8.2f} {sampled_s:8.2f}"
                  + ("" if same else f"  DIFFER: whole {whole_found}, sampled {sampled_found}"), flush=True)
            differ += [] if same else [page]
        tab.close()
        browser.close()
    print(f"{'total':60} {totals[0]:8.2f} {totals[1]:8.2f}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
