"""The book, the report and a student's feedback as a reader sees them: in headless Chromium, with no network.

Every page of the build is opened from disk (``file://``, as the README tells a
reader to open it) in Debian's ``chromium`` driven by playwright; the search
page and the download buttons are used over a local HTTP server started here.
Any request that is neither ``file://`` nor that server (nor ``data:``/
``blob:``) is aborted and counted as a failure: the book must read offline.

Counting rule for formulas: a page's source formulas are the math tokens that
MyST's markdown parser, with the extensions the book enables (``dollarmath``,
``amsmath``), finds in the page's markdown: ``$...$`` and ``$$...$$`` (with or
without a label), an ``amsmath`` environment (``\\begin{align}`` ...) at top
level, a ``{math}`` role and a ```` ```{math} ```` directive, each counted as
one formula; inside other directives (admonitions, figures) their markdown
body is counted the same way. Code cells and other code or data directives,
cell outputs and the captions of code-cell figures are not counted (the book
puts no TeX there). For an ``.ipynb`` page only its markdown cells
count. In the browser each formula MathJax typesets is one ``mjx-container``,
counted in the page's article only (the sidebar's table of contents repeats a
heading's formula); the two counts must be equal on every page (a page with
no source, such as the search page, counts 0).

Run alone with ``pytest -m browser``; skip with ``-m "not browser"``.
"""
from __future__ import annotations

import csv
import functools
import http.server
import json
import re
import shutil
import threading
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from playwright.sync_api import sync_playwright

from autograde.course import EXERCISES, REPO, assignment_ids

pytestmark = [pytest.mark.browser, pytest.mark.book, pytest.mark.slow]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 800}
# Formulas of the markdown parser (markdown-it / MyST token types) that become one typeset formula each.
MATH_TOKENS = {"math_inline", "math_inline_double", "math_block", "math_block_label", "math_single",
               "math_block_eqno", "amsmath"}
# TeX left in a page's text outside code and typeset maths: delimiters, environments, control words.
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\begin\{|\\end\{|\\[A-Za-z]{2,}|\$[^$\s][^$\n]*\$")


# ---------------------------------------------------------------------------------------------------------------------
# Sources: formulas per page


@functools.cache
def _markdown_parser():
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    return create_md_parser(MdParserConfig(enable_extensions={"dollarmath", "amsmath", "colon_fence"}), RendererHTML)


def _tokens(tokens):
    for t in tokens:
        yield t
        if t.children:
            yield from _tokens(t.children)


# Directives whose body is not markdown (code, data, generated lists): formulas are not looked for inside.
NOT_MARKDOWN = {"code-cell", "code-block", "code", "sourcecode", "raw", "literalinclude", "bibliography", "toctree",
                "glue", "csv-table", "tableofcontents", "include"}


def formulas_in_markdown(text: str) -> int:
    """The number of formulas MyST's parser finds in `text` (the counting rule of this module's docstring)."""
    count = 0
    for t in _tokens(_markdown_parser().parse(text)):
        if t.type in MATH_TOKENS:
            count += 1
        elif t.type == "myst_role" and t.meta.get("name") == "math":
            count += 1
        elif t.type in ("fence", "colon_fence") and t.info.strip().startswith("{"):
            name = t.info.strip()[1:].split("}")[0]
            if name == "math":
                count += 1
            elif name not in NOT_MARKDOWN:  # an admonition, a figure's caption, ...: markdown, after its :options:
                body = re.sub(r"\A(?:---\n.*?\n---\n|(?::[\w-]+:[^\n]*\n)*)", "", t.content, flags=re.S)
                count += formulas_in_markdown(body)
    return count


def source_of(page: Path, book: Path) -> Path | None:
    """The repository file a built page was made from (``book/x.html`` from ``book/x.md`` or ``.ipynb``), if any."""
    stem = REPO / page.relative_to(book).with_suffix("")
    for suffix in (".md", ".ipynb"):
        if stem.with_suffix(suffix).is_file():
            return stem.with_suffix(suffix)
    return None


def formulas_in_source(source: Path | None) -> int:
    if source is None:
        return 0
    if source.suffix == ".ipynb":
        cells = json.loads(source.read_text())["cells"]
        return sum(formulas_in_markdown("".join(c["source"])) for c in cells if c["cell_type"] == "markdown")
    return formulas_in_markdown(source.read_text())


# ---------------------------------------------------------------------------------------------------------------------
# The browser


def book_pages(book: Path) -> list[Path]:
    """Every HTML page of the build (theme assets, sources and executed copies excluded): new chapters come by themselves."""
    skip = {"_static", "_sources", "_images", "jupyter_execute"}
    return sorted(p for p in book.rglob("*.html") if not skip & set(p.relative_to(book).parts))


def label(page: Path, book: Path) -> str:
    return str(page.relative_to(book))


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(book):
    """A local HTTP server over the built book (search fetches its index; downloads come from it); its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(book))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    """Headless Debian Chromium (playwright cannot download a browser here)."""
    assert Path(CHROMIUM).is_file(), f"no chromium at {CHROMIUM}: sudo apt-get install chromium (make test does, as root)"

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM)
        yield chromium
        chromium.close()


@dataclass
class Visit:
    """What happened while a page was open: problems a reader would meet, and facts measured on the page."""
    url: str
    problems: list[str] = field(default_factory=list)  # console errors, failed and blocked requests, HTTP errors
    facts: dict = field(default_factory=dict)


class Tab:
    """A browser page on which every request off this machine is aborted and reported."""

    def __init__(self, browser, viewport: dict, local: str = "", accept_downloads: bool = False):
        self.context = browser.new_context(viewport=viewport, accept_downloads=accept_downloads)
        self.local = local
        self.visit = Visit("")
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.visit.problems.append(
            f"console error: {m.text} ({m.location.get('url', '')})"))
        self.page.on("pageerror", lambda e: self.visit.problems.append(f"script error: {e}"))
        self.page.on("requestfailed", lambda r: self.visit.problems.append(f"request failed: {r.url} ({r.failure})"))
        self.page.on("response", lambda r: r.status >= 400 and self.visit.problems.append(f"HTTP {r.status}: {r.url}"))

    def _route(self, route):
        url = route.request.url
        if url.startswith(("file://", "data:", "blob:", "about:")) or (self.local and url.startswith(self.local)):
            route.continue_()
        else:
            self.visit.problems.append(f"network request (blocked): {url}")
            route.abort("internetdisconnected")

    def open(self, url: str) -> Visit:
        self.visit = Visit(url)
        self.page.goto(url, wait_until="load")
        # index.html redirects to the first page (a meta refresh): wait until the page it lands on has loaded too.
        self.page.wait_for_function("() => document.readyState === 'complete' && document.body")
        # Typesetting is done when MathJax's startup promise resolves; then every web font it asked for.
        self.page.evaluate("async () => { if (window.MathJax && MathJax.startup) await MathJax.startup.promise;"
                           " await document.fonts.ready; }")
        return self.visit

    def close(self):
        self.context.close()


MEASURE = """() => {
  const skip = el => el.closest('pre, code, script, style, textarea, mjx-container, .highlight');
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const text = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!skip(n.parentElement)) text.push(n.textContent);
  }
  const images = [...document.images].map(img => ({
    src: img.currentSrc || img.src, alt: (img.getAttribute('alt') || '').trim(),
    loaded: img.complete && img.naturalWidth > 0}));
  // Formulas of the page's own content: a heading's formula shows again in the sidebar's table of contents.
  const content = document.querySelector('article') || document.querySelector('main') || document.body;
  return {text: text.join(' '), formulas: content.querySelectorAll('mjx-container').length, url: location.href,
          mathjax: !!(window.MathJax && MathJax.startup), images};
}"""

# Elements sticking out of the phone's width that no scrolling box of their own contains.
OVERFLOW = """() => {
  const root = document.scrollingElement, width = root.clientWidth;
  const scrolls = el => { for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX; if (o === 'auto' || o === 'scroll' || o === 'hidden') return true; }
    return false; };
  const culprits = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width && r.right > width + 1 && !scrolls(el) && getComputedStyle(el).position !== 'fixed') {
      culprits.push(`<${el.tagName.toLowerCase()} class="${el.className && el.className.baseVal === undefined
        ? el.className : ''}"> right edge at ${Math.round(r.right)} px: ${(el.textContent || '').trim().slice(0, 60)}`);
    }
  }
  return {scrollWidth: root.scrollWidth, clientWidth: width, culprits: culprits.slice(0, 5)};
}"""


def _load_images(page):
    """Bring lazy images in: scroll each into view and wait until every image has finished, loaded or not."""
    page.evaluate("""async () => {
      for (const img of document.images) { img.loading = 'eager'; img.scrollIntoView(); }
      await Promise.all([...document.images].map(img => img.complete ? null :
        new Promise(done => { img.addEventListener('load', done); img.addEventListener('error', done); })));
      window.scrollTo(0, 0);
    }""")


# axe-core (from the pinned axe-playwright-python package, which ships it), with WCAG 2.0 and 2.1's A and AA rules.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


# Code blocks hold most of a long page's elements (chapter 5: 17,000 highlighted tokens of 26,000), and axe's
# colour-contrast rule, which judges each element with text of its own by its colours, its font's size and weight and
# what is painted behind it, spent two thirds of the accessibility check on them. Tokens alike in all of these get the
# same verdict if axe can give one: so in a code block the rule judges one shown token of each kind, one it gives a
# verdict on (in view of its block, two characters or more and none outside Unicode's BMP: axe leaves a one-character
# text undecided), or every shown token of a kind that has none, or that a pseudo-element paints behind (axe weighs
# its size against each token's); a hidden token passes axe's rule. The rest of the page is judged whole, and every
# other rule judges the whole page.
CODE_TOKEN_SAMPLES = r"""() => {
  const layers = new Map();  // element -> what paints behind its text: its and its ancestors' backgrounds
  const painted = el => { if (!el) return ''; if (!layers.has(el)) { const s = getComputedStyle(el);
      const pseudo = ['::before', '::after'].some(p => !['none', 'normal'].includes(getComputedStyle(el, p).content));
      layers.set(el, [s.backgroundColor, s.backgroundImage, s.opacity, s.filter, s.mixBlendMode, pseudo ? 'PSEUDO' : '']
                     .join(' ') + '/' + painted(el.parentElement)); }
    return layers.get(el); };
  const ownText = el => [...el.childNodes].filter(n => n.nodeType === Node.TEXT_NODE).map(n => n.textContent).join('');
  const decided = (el, box) => {
    const r = el.getBoundingClientRect(), text = ownText(el).replace(/\s+/g, ' ').trim();
    return r.left >= box.left && r.right <= box.right && r.top >= box.top && r.bottom <= box.bottom
      && text.length >= 2 && !/[\u{10000}-\u{10FFFF}]/u.test(text);
  };
  const blocks = [...document.querySelectorAll('pre')].filter(pre => pre.firstElementChild);
  const samples = blocks.filter(pre => ownText(pre).trim());  // (text outside any token: the block is judged whole)
  const kinds = new Map();  // kind -> {sample, members}
  for (const pre of blocks) {
    const box = pre.getBoundingClientRect();
    for (const el of pre.querySelectorAll('*')) {
      // (a hidden token, in a collapsed cell for one, passes: axe judges contrast only where text is shown)
      if (!ownText(el).trim() || !el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) continue;
      const s = getComputedStyle(el);
      const kind = [s.color, s.webkitTextFillColor, s.fontSize, s.fontWeight, s.textShadow, s.webkitTextStrokeWidth,
                    s.visibility, painted(el)].join('|');
      if (!kinds.has(kind)) kinds.set(kind, {sample: null, members: [], pseudo: kind.includes('PSEUDO')});
      const found = kinds.get(kind);
      found.members.push(el);
      if (!found.sample && !found.pseudo && decided(el, box)) found.sample = el;
    }
  }
  for (const {sample, members} of kinds.values()) samples.push(...(sample ? [sample] : members));
  window.__codeBlocks = blocks;
  window.__codeSamples = samples;
}"""


def _axe_violations(page) -> list[str]:
    """What axe-core finds on the open page against WCAG 2.1 A/AA: one line per rule, with its elements."""
    try:
        axe = (files("axe_playwright_python") / "axe.min.js").read_text()
    except ModuleNotFoundError:  # (the other browser tests still run: only the accessibility test fails on it)
        return ["axe-core is not installed: `make venv` installs the pinned axe-playwright-python"]
    page.evaluate(axe)
    page.evaluate(CODE_TOKEN_SAMPLES)
    # (preload: false: axe would fetch the stylesheets with XMLHttpRequest, which a file:// page refuses, and the
    # refusals are console errors the offline test counts; only css-orientation-lock needs them.)
    run = """async ([part, options]) => {
      // (an element included inside an excluded one is judged: axe goes by the innermost of the two)
      const context = {page: document, sampled: {include: [document, ...window.__codeSamples],
                                                 exclude: window.__codeBlocks}}[part];
      return (await axe.run(context, {...options, resultTypes: ['violations'], preload: false})).violations;
    }"""
    violations = page.evaluate(run, ["page", {"runOnly": {"type": "tag", "values": AXE_TAGS},
                                              "rules": {"color-contrast": {"enabled": False}}}])
    violations += page.evaluate(run, ["sampled", {"runOnly": {"type": "rule", "values": ["color-contrast"]}}])
    return [f"{v['id']} ({v['impact']}, {len(v['nodes'])} element(s), e.g. {v['nodes'][0]['html'][:120]})"
            for v in violations]


@pytest.fixture(scope="module")
def desktop_visits(book, browser):
    """Every page of the build opened at desktop width from disk: {page label: Visit} with the measured facts."""
    tab = Tab(browser, DESKTOP)
    visits = {}
    try:
        for page in book_pages(book):
            visit = tab.open(page.as_uri())
            _load_images(tab.page)
            visit.facts = tab.page.evaluate(MEASURE)
            visit.facts["accessibility"] = _axe_violations(tab.page)
            visits[label(page, book)] = visit
    finally:
        tab.close()
    return visits


@pytest.fixture(scope="module")
def phone_visits(book, browser):
    """Every page opened at a phone's width (375 px): {page label: Visit} with what sticks out sideways."""
    tab = Tab(browser, PHONE)
    visits = {}
    try:
        for page in book_pages(book):
            visit = tab.open(page.as_uri())
            visit.facts = tab.page.evaluate(OVERFLOW)
            visits[label(page, book)] = visit
    finally:
        tab.close()
    return visits


def report(failures: list[str]) -> str:
    return f"{len(failures)} problem(s):\n" + "\n".join(failures)


# ---------------------------------------------------------------------------------------------------------------------
# The book


def test_the_build_has_the_pages_of_the_toc(book):
    pages = {label(p, book) for p in book_pages(book)}
    expected = {f"book/{a}.html" for a in assignment_ids()} | {f"exercises/{a}/{a}.html" for a in assignment_ids()}
    assert expected | {"intro.html", "search.html"} <= pages, f"pages missing from the build: {expected - pages}"


def test_every_page_loads_offline_with_no_error(desktop_visits, phone_visits):
    failures = [f"{name} ({width}): {problem}"
                for width, visits in (("desktop", desktop_visits), ("375 px", phone_visits))
                for name, visit in visits.items() for problem in visit.problems]
    assert not failures, report(failures)


def test_maths_is_typeset_with_no_raw_tex_left(book, desktop_visits):
    failures = []
    for name, visit in desktop_visits.items():
        raw = RAW_TEX.findall(visit.facts["text"])
        if raw:
            failures.append(f"{name}: raw TeX left in the text after typesetting: {sorted(set(raw))[:8]}")
        landed = Path(unquote(urlparse(visit.facts["url"]).path))  # index.html redirects to the first page
        source = source_of(landed, book)
        expected = formulas_in_source(source)
        if visit.facts["formulas"] != expected:
            failures.append(f"{name}: {visit.facts['formulas']} formulas typeset, but {expected} in "
                            f"{source.relative_to(REPO) if source else 'no source'}"
                            + ("" if visit.facts["mathjax"] or not expected else " (MathJax did not start)"))
    assert not failures, report(failures)


def test_every_image_loads_and_has_alt_text(desktop_visits):
    failures = []
    for name, visit in desktop_visits.items():
        for image in visit.facts["images"]:
            if not image["loaded"]:
                failures.append(f"{name}: image did not load (natural width 0): {image['src'][:120]}")
            if not image["alt"]:
                failures.append(f"{name}: image has no alt text: {image['src'][:120]}")
    assert not failures, report(failures)


def test_every_page_passes_axe_cores_wcag_2_1_a_and_aa_rules(desktop_visits):
    # The theme's controls named and the bibliography's roles fixed by book/_ext/accessible_html.py: 271 violating
    # elements over the 17 pages without it (unnamed sidebar toggles, labels that differ from the visible text,
    # deprecated doc-biblioentry roles in a list without list items).
    found = {page: visit.facts["accessibility"] for page, visit in desktop_visits.items()
             if visit.facts["accessibility"]}
    assert not found, "\n".join(f"{page}: {'; '.join(problems)}" for page, problems in found.items())


CODE_PAGE = """<!doctype html><html lang="en"><head><title>code</title><style>
pre {{ background: #fff; color: #222; overflow: auto; max-width: 40em; }} .k {{ color: #006; font-weight: bold; }}
.n {{ color: #333; }} .mi {{ color: #075; }} .faint {{ color: #bbb; }} .boxed {{ position: relative; }}
.boxed::before {{ content: ""; position: absolute; width: 12px; height: 12px; background: #fff; }}
</style></head><body><main><h1>Code</h1><p>{prose}</p><div class="highlight"><pre>{code}</pre></div></main></body></html>"""


@pytest.mark.parametrize("code, prose, found", [
    # One faint token among 8,000 that pass, far down the block (and so out of the window's view); every token in a
    # span, as Pygments writes them.
    ("".join(f'<span class="k">def</span> <span class="n">f{i}</span><span class="p">():</span> <span class="mi">{i}</span>\n'
             if i != 1700 else '<span class="faint">faint</span>\n' for i in range(2000)), "Text.", 1),
    # A faint kind whose first token is scrolled out of its block sideways, and a second one in view.
    ('<span class="n">' + "x" * 300 + '</span> <span class="faint">far</span>\n<span class="faint">near</span>\n',
     "Text.", 1),
    # Faint prose beside code that passes; code that passes; text of the block's own outside any token.
    ('<span class="k">def</span> f(): pass\n', '<span style="color: #bbb">faint prose</span>', 1),
    ('<span class="k">def</span> <span class="n">f</span><span class="p">():</span> <span class="mi">1</span>\n', "Text.", 0),
    ('<span class="k">def</span> f(): pass\n</pre><pre style="color: #ccc"><span class="k">def</span> loose', "Text.", 1),
    # Tokens of a faint kind on which axe decides nothing (one character, an emoji, hidden) before one it decides on.
    ('<span class="faint">x</span> <span class="faint">\U0001F600</span> <span class="faint">xs</span>\n', "Text.", 1),
    ('<span class="k">def</span>\n</pre></div><div class="highlight" style="display: none"><pre><span class="faint">far'
     '</span>\n</pre></div><div class="highlight"><pre><span class="faint">near</span>\n', "Text.", 1),
    # A faint kind a pseudo-element paints behind: axe decides on its long tokens only, so each token is judged.
    ('<span class="faint boxed">ab</span> <span class="faint boxed">a long faint token</span>\n', "Text.", 1),
    # A faint kind only ever one character long: each token judged (axe leaves them undecided: nothing is found).
    ('<span class="faint">x</span> <span class="faint">y</span>\n', "Text.", 0),
], ids=["one-faint-token-in-8000", "first-faint-token-out-of-view", "faint-prose", "all-pass", "faint-loose-text",
        "undecided-faint-tokens-first", "hidden-block-first", "behind-a-pseudo-element", "only-one-character-tokens"])
def test_the_contrast_check_judges_every_kind_of_code_token(browser, tmp_path, code, prose, found):
    # Code blocks are judged one token of each kind (_axe_violations): a faint kind is found wherever its tokens are.
    page_path = tmp_path / "page.html"
    page_path.write_text(CODE_PAGE.format(prose=prose, code=code))
    tab = Tab(browser, DESKTOP)
    try:
        tab.open(page_path.as_uri())
        problems = _axe_violations(tab.page)
    finally:
        tab.close()
    contrast = [p for p in problems if p.startswith("color-contrast ")]
    assert len(contrast) == found, f"expected {found} colour-contrast violation(s), axe found: {problems}"
    if found:
        assert re.search(r"1 element\(s\), e\.g\. <(span|pre)[^>]*>.*(faint|loose|far|near|xs|long)", contrast[0]), contrast


def test_no_page_scrolls_sideways_at_phone_width(phone_visits):
    failures = [f"{name}: the page is {v.facts['scrollWidth']} px wide at {v.facts['clientWidth']} px; sticking out: "
                + "; ".join(v.facts["culprits"] or ["(no single element found)"])
                for name, v in phone_visits.items() if v.facts["scrollWidth"] > v.facts["clientWidth"]]
    assert not failures, report(failures)


@pytest.mark.parametrize("word, page", [("softmax", "book/01-weighted-sum.html"),
                                        ("Nadaraya", "book/01-weighted-sum.html")])
def test_search_finds(browser, server, word, page):
    tab = Tab(browser, DESKTOP, local=server)
    try:
        visit = tab.open(f"{server}search.html?q={word}")
        tab.page.wait_for_function("() => { const s = document.querySelector('#search-results .search-summary');"
                                   " return s && !/Searching|Preparing/.test(s.textContent); }", timeout=20_000)
        links = tab.page.eval_on_selector_all("#search-results ul.search li a", "as => as.map(a => a.href)")
        summary = tab.page.inner_text("#search-results .search-summary")
    finally:
        tab.close()
    assert not visit.problems, f"search.html?q={word}: " + report(visit.problems)
    assert any(link.split("?")[0].endswith(page) for link in links), \
        f"search.html: searching {word!r} does not list {page} (summary: {summary!r}; results: {links[:10]})"


@pytest.mark.parametrize("assignment", assignment_ids())
def test_download_button_gives_the_exercise_notebook(browser, server, book, tmp_path, assignment):
    name = f"exercises/{assignment}/{assignment}.html"
    tab = Tab(browser, DESKTOP, local=server, accept_downloads=True)
    try:
        visit = tab.open(server + name)
        assert not visit.problems, f"{name}: " + report(visit.problems)
        button = tab.page.get_by_role("button", name="Download this page")
        assert button.count() == 1, f"{name}: no download button ('Download this page') in the page's header"
        button.click()
        link = tab.page.locator("a.dropdown-item", has_text=".ipynb")
        assert link.count() == 1, f"{name}: the download menu offers no .ipynb"
        with tab.page.expect_download(timeout=20_000) as download:
            link.click()
        saved = tmp_path / download.value.suggested_filename
        download.value.save_as(saved)
        assert not visit.problems, f"{name}: " + report(visit.problems)
    finally:
        tab.close()
    assert saved.name == f"{assignment}.ipynb", f"{name}: the download button gives {saved.name}, not {assignment}.ipynb"
    released = EXERCISES / assignment / f"{assignment}.ipynb"
    assert saved.read_bytes() == released.read_bytes(), \
        f"{name}: the downloaded notebook differs from {released.relative_to(REPO)}"


# ---------------------------------------------------------------------------------------------------------------------
# The instructor's report and a student's feedback


@pytest.fixture(scope="module")
def grading_output(request, tmp_path_factory):
    """The --out folder of a real grading run: the suite's `graded` class if this session grades it anyway, else
    three notebooks of chapter 1 (complete, partial, not a notebook) graded here with the real command."""
    if any("graded" in getattr(item, "fixturenames", ()) for item in request.session.items):
        return request.getfixturevalue("graded")["out"]
    from tests.support.commands import grade_command
    from tests.support.synthetic import completed_notebook, write_submission

    first = assignment_ids()[0]
    base = tmp_path_factory.mktemp("browser-grading")
    write_submission(completed_notebook(first), base / "in", "full", first)
    write_submission(completed_notebook(first, {"softmax": "# YOUR CODE HERE\nraise NotImplementedError()"}),
                     base / "in", "partial", first)
    (base / "in" / "broken" / first).mkdir(parents=True)
    (base / "in" / "broken" / first / f"{first}.ipynb").write_text("this is not JSON")
    proc = grade_command(base / "in", base / "out", "--assignment", first)
    assert proc.returncode == 0, f"autograde grade failed:\n{proc.stdout}\n{proc.stderr}"
    return base / "out"


def _graded_page(browser, path: Path) -> Visit:
    tab = Tab(browser, DESKTOP)
    try:
        visit = tab.open(path.as_uri())
        _load_images(tab.page)
        visit.facts = tab.page.evaluate(MEASURE)
        visit.facts["heading"] = tab.page.inner_text("h1")
    finally:
        tab.close()
    return visit


def test_report_shows_its_figures_offline(browser, grading_output):
    path = grading_output / "report.html"
    visit = _graded_page(browser, path)
    assert not visit.problems, f"{path.name}: " + report(visit.problems)
    images = visit.facts["images"]
    assignments = len(re.findall(r"<h2>\d\d-", path.read_text()))
    assert len(images) >= max(assignments, 1), \
        f"{path.name}: {len(images)} figures for {assignments} assignments (a histogram and pass rates each)"
    bad = [f"{i['alt'] or 'no alt text'} ({'loaded' if i['loaded'] else 'natural width 0'})"
           for i in images if not (i["loaded"] and i["alt"])]
    assert not bad, f"{path.name}: figures not shown or without alt text: {bad}"


def test_feedback_page_renders_offline(browser, grading_output):
    pages = sorted((grading_output / "feedback").glob("*.html"))
    assert pages, f"no feedback page in {grading_output / 'feedback'}"
    # A student who lost points, if there is one: the page a teacher hands back with the most on it.
    with open(grading_output / "grades.csv", newline="") as f:
        partial = [r["student_id"] for r in csv.DictReader(f) if 0 < float(r["score"]) < float(r["max_score"])]
    path = next((p for p in pages if p.stem in partial), pages[0])
    visit = _graded_page(browser, path)
    assert not visit.problems, f"feedback/{path.name}: " + report(visit.problems)
    assert path.stem in visit.facts["heading"], f"feedback/{path.name}: heading {visit.facts['heading']!r}"
    bad = [i["src"][:80] for i in visit.facts["images"] if not (i["loaded"] and i["alt"])]
    assert not bad, f"feedback/{path.name}: images not shown or without alt text: {bad}"
