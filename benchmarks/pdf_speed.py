"""Benchmark ``grade --pdf``'s printing: pages per second for a class of feedback pages (not a test).

    .venv/bin/python -m benchmarks.pdf_speed [--students 300] [--repeat 3] [--tabs 1 2]

Writes a chapter-1 feedback page for each of `--students` students (every
other one with failed checks and their messages, as the grader writes them)
and the report, prints them all to PDF the way ``grade --pdf`` does
(:func:`autograde.pages.pdf.write_pdfs`: one Chromium, each tab reused) `--repeat`
times for each number of tabs in `--tabs` (default: the grader's, one per core),
and prints the best and the median pages per second (the browser's start
excluded, and reported on its own).
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from autograde.course import assignment_ids
from autograde.pages import pdf
from autograde.pages.feedback import write_feedback
from autograde.pages.report import write_report
from autograde.results.classify import CellResult, Status, graded_cells

MESSAGE = ("softmax([1000, 0, -1000]) (subtract the maximum before exp) contains NaN (not a number), first at index "
           "(0,); expected 1. NaN usually comes from inf - inf, 0 / 0 or 0 * inf.")


def class_rows(students: int, assignment: str) -> list[CellResult]:
    """Rows of scores.csv for a class: every other student fails every third check, with a test's message."""
    rows = []
    for n in range(students):
        for i, (grade_id, points) in enumerate(graded_cells(assignment)):
            failed = n % 2 and i % 3 == 0
            rows.append(CellResult(f"student-{n:04d}", assignment, grade_id, 0.0 if failed else points, points,
                                   Status.FAILED if failed else Status.PASSED, MESSAGE if failed else ""))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tabs", type=int, nargs="+", default=[pdf.default_tabs()])
    args = parser.parse_args()
    rows = class_rows(args.students, assignment_ids()[0])
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        pages = write_feedback(rows, out / "feedback")
        report = write_report(rows, out / "report.html", 1.0, args.students)
        started = time.perf_counter()
        chromium = pdf.check_chromium()
        print(f"Chromium found and started once in {time.perf_counter() - started:.1f} s")
        for tabs in args.tabs:
            rates = []
            for _ in range(args.repeat):
                printed = pdf.write_pdfs(out, {p.stem: p for p in pages}, report, chromium=chromium, tabs=tabs)
                rates.append(printed.pages_per_second)
                print(f"{tabs} tab(s): {len(pages) + 1} pages in {printed.seconds:.1f} s: "
                      f"{printed.pages_per_second:.1f} pages per second")
            print(f"{tabs} tab(s): best of {args.repeat}: {max(rates):.1f} pages per second; "
                  f"median {statistics.median(rates):.1f}")

if __name__ == "__main__":
    main()
