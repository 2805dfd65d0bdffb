"""The feedback pages and the report printed to PDF (``grade --pdf``), offline, in one headless Chromium.

The PDFs are the HTML pages as a browser prints them: the same text, the
maths (MathML, which Chromium typesets natively) and the figures (``data:``
PNGs); the pages need nothing from the network, and every request that is
not a ``data:`` URL is refused (and logged), so printing never
waits on, or leaks to, the internet. One browser prints every page, in a
few tabs (one per core) each reused page after page: a browser's start costs
more than a page.

The files are named so that an LMS's bulk feedback upload finds whose each is:

- every export: ``feedback-pdf/<student id>_<LMS user id>.pdf`` (``<student id>.pdf`` without a user id), and
  the report as ``report.pdf``;
- an export whose LMS has a bulk feedback upload (:attr:`autograde.intake.adapter.Layout.feedback`), also the zip
  that upload reads, its files named as the LMS's adapter says (Moodle's ``feedback-pdf.zip``,
  :mod:`autograde.intake.moodle`).
"""
from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..intake import lms as layouts
from ..intake.adapter import FeedbackUpload, safe_id

# (Kept under their old names for the modules that read them from here: grade.py, __main__.py.)
from ..intake.moodle import MOODLE_FILE, MOODLE_ZIP, moodle_folder  # noqa: F401

log = logging.getLogger(__name__)

PDF_FOLDER = "feedback-pdf"  # one PDF per student
REPORT_PDF = "report.pdf"
MAX_TABS = 4  # tabs printing at once (more gain nothing on a few cores and cost memory)
# Where Chromium is looked for, by name on the PATH (Debian's package is `chromium`), then at Debian's path.
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_DEFAULT = "/usr/bin/chromium"
# A4 with room for the page numbers at the foot; backgrounds kept (the summary and the notes are shaded boxes).
PDF_OPTIONS = {"format": "A4", "print_background": True, "display_header_footer": True,
               "margin": {"top": "14mm", "bottom": "16mm", "left": "12mm", "right": "12mm"},
               "header_template": "<div></div>",
               "footer_template": '<div style="font-size:8px;width:100%;text-align:center;color:#666">'
                                  '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'}


class ChromiumUnavailable(RuntimeError):
    """No Chromium that playwright can drive: ``--pdf`` cannot print (said before anything is graded)."""


def find_chromium(path: str | None = None) -> str:
    """The Chromium executable to print with: `path` if given, else the first of :data:`CHROMIUM_NAMES` on the
    PATH, else :data:`CHROMIUM_DEFAULT`. Raises :class:`ChromiumUnavailable` if it is not an executable file."""
    found = path or next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), CHROMIUM_DEFAULT)
    resolved = shutil.which(found)
    if resolved is None:
        raise ChromiumUnavailable(
            f"--pdf needs Chromium to print the pages, and there is no executable {found!r}"
            + ("" if path else f" (nor {', '.join(CHROMIUM_NAMES)} on the PATH)")
            + ". Install it (Debian/Ubuntu: sudo apt-get install chromium; or scripts/system-packages), or give its "
              "path with --chromium PATH; or grade without --pdf.")
    return resolved


def check_chromium(path: str | None = None) -> str:
    """The Chromium executable (:func:`find_chromium`), proven by starting it once through playwright; raises
    :class:`ChromiumUnavailable` with the reason if it does not start."""
    executable = find_chromium(path)
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError as error:  # (pinned in requirements.txt; missing only in an environment made otherwise)
        raise ChromiumUnavailable(f"--pdf needs the Python package playwright ({error}): pip install -r "
                                  "requirements.txt") from None
    def start():
        with sync_playwright() as p:
            p.chromium.launch(executable_path=executable).close()

    try:
        _in_a_thread(start)
    except Error as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ChromiumUnavailable(f"--pdf needs Chromium to print the pages, and {executable} does not start: "
                                  f"{first}. Give a working one with --chromium PATH, or grade without --pdf.") from None
    return executable


def pdf_name(student: str, lms_id: str = "") -> str:
    """A student's PDF's file name: their student id and, where the LMS gave one, its user id
    (``Jane-Doe_123456.pdf``, ``s1234.pdf``). The user id is the export's text (Gradescope's is an SID or an email):
    it is made safe for a file name (:func:`autograde.intake.lms.safe_id`) and cut to 64 characters."""
    lms_id = safe_id(lms_id)[:64]
    return f"{student}_{lms_id}.pdf" if lms_id else f"{student}.pdf"


@dataclass
class Printed:
    """What :func:`write_pdfs` wrote: each student's PDF, the report's, the LMS's feedback upload (or None), and how
    fast."""

    pdfs: dict[str, Path]
    report: Path
    upload: Path | None = None
    not_in_zip: list[str] = field(default_factory=list)  # students with no user id the LMS matches: not in the upload
    seconds: float = 0.0  # printing only (the browser's start excluded)

    @property
    def pages_per_second(self) -> float:
        """HTML pages printed per second."""
        return (len(self.pdfs) + 1) / self.seconds if self.seconds else 0.0


def default_tabs() -> int:
    """Tabs printing at once: one per core this process may use (Chromium renders each tab in a process of its
    own), at most :data:`MAX_TABS`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (no affinity on this platform)
        cores = os.cpu_count() or 1
    return max(1, min(MAX_TABS, cores))


def print_pages(jobs: list[tuple[Path, Path]], chromium: str, progress: bool = False, tabs: int | None = None) -> float:
    """Print each self-contained HTML file to its PDF (``(html, pdf)`` pairs) in one headless Chromium with no
    network, in `tabs` tabs (default :func:`default_tabs`), each reused page after page; returns the seconds spent
    printing (the browser's start excluded). A request for anything but a ``data:`` URL is aborted and logged as a
    warning: the pages are meant to need nothing else."""
    return _in_a_thread(asyncio.run, _print_pages(jobs, chromium, progress, tabs or default_tabs()))


def _in_a_thread(function, *args):
    """`function(*args)` in a thread of its own: playwright needs a thread with no event loop running, which the
    caller's may have (grade() called from Jupyter)."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(function, *args).result()


async def _print_pages(jobs: list[tuple[Path, Path]], chromium: str, progress: bool, tabs: int) -> float:
    from playwright.async_api import async_playwright
    from tqdm import tqdm

    refused: list[str] = []

    async def offline(route):
        url = route.request.url
        if url.startswith("data:"):
            await route.continue_()
        else:
            refused.append(url)
            await route.abort("internetdisconnected")

    todo = list(reversed(jobs))
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium)
        try:
            # (The pages have no script; whatever a student's text might smuggle in is not run either.)
            context = await browser.new_context(offline=True, java_script_enabled=False)
            await context.route("**/*", offline)
            with tqdm(total=len(jobs), desc="printing PDFs", unit="page", disable=not progress) as bar:
                async def tab():
                    page = await context.new_page()
                    while todo:
                        html, pdf = todo.pop()
                        # (Given as content, not opened by URL: no navigation, no file of the disk readable from it.)
                        await page.set_content(html.read_text(encoding="utf-8"), wait_until="load")
                        await page.pdf(path=str(pdf), **PDF_OPTIONS)
                        bar.update()

                started = time.perf_counter()
                await asyncio.gather(*(tab() for _ in range(max(1, min(tabs, len(jobs))))))
                seconds = time.perf_counter() - started
        finally:
            await browser.close()
    for url in sorted(set(refused)):
        log.warning("a page asked for %s while printing to PDF: refused (the pages must need no network)", url[:200])
    return seconds


def feedback_upload(lms: str | bool) -> FeedbackUpload | None:
    """The bulk feedback upload of the export layout named `lms` (:attr:`autograde.intake.collect.Collected.lms`),
    or None where it has none. ``True`` names the one layout that has one (what a caller that only knows whether
    the export has one passes); ValueError if several have one."""
    if lms is True:
        uploads = [layout.feedback for layout in layouts.LAYOUTS.values() if layout.feedback is not None]
        if len(uploads) != 1:
            raise ValueError(f"{len(uploads)} export layouts have a feedback upload: name the export's layout")
        return uploads[0]
    layout = layouts.LAYOUTS.get(lms) if lms else None
    return layout.feedback if layout is not None else None


def write_pdfs(out: Path, feedback: dict[str, Path], report: Path, lms_ids: dict[str, str] | None = None,
               names: dict[str, str] | None = None, lms: str | bool = "", chromium: str | None = None,
               progress: bool = False, tabs: int | None = None) -> Printed:
    """Print each student's feedback page (`feedback`: student id → HTML file) to ``out/feedback-pdf/`` and
    `report` to ``out/report.pdf``; where the export's layout `lms` has a bulk feedback upload
    (:func:`feedback_upload`; Moodle's), also write its zip in ``out`` (see the module's docstring).

    `lms_ids` maps student ids to the LMS's user ids (Moodle's participant ids), `names` to the names the export
    gave them (Moodle's full names; the student id where none is known). A student the upload cannot name (no
    participant id) is left out of the zip, listed in :attr:`Printed.not_in_zip` and logged.
    """
    lms_ids, names = lms_ids or {}, names or {}
    folder = out / PDF_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    pdfs = {student: folder / pdf_name(student, lms_ids.get(student, "")) for student in sorted(feedback)}
    jobs = [(feedback[s], pdfs[s]) for s in pdfs] + [(report, out / REPORT_PDF)]
    seconds = print_pages(jobs, chromium or find_chromium(), progress, tabs)
    log.info("printed %d page(s) to PDF in %.1f s (%.1f pages per second)", len(jobs), seconds,
             len(jobs) / seconds if seconds else 0.0)
    printed = Printed(pdfs, out / REPORT_PDF, seconds=seconds)
    upload = feedback_upload(lms)
    if upload is not None:
        printed.upload = out / upload.file
        members, printed.not_in_zip = upload.members(pdfs, lms_ids, names)
        with zipfile.ZipFile(printed.upload, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, path in members.items():
                archive.write(path, name)
        if printed.not_in_zip:
            log.warning(upload.left_out, upload.file, ", ".join(printed.not_in_zip), folder)
    return printed
