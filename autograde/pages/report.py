"""The instructor's report: score distribution per assignment, pass rate per test cell, statuses, notes, run time.

Figures are SVG drawn from a template (``templates/report_figure.svg.j2``) and
inlined as ``data:`` URIs, so the page needs no network and no file beside it.
The page's layout is ``templates/report.html.j2``.
"""
from __future__ import annotations

import base64
import math
from collections import Counter, defaultdict
from pathlib import Path

from ..results.classify import CellResult, Status
from ..results.late import Lateness
from ..results.totals import submissions
from .render import render

# The bars' colour (tableau-colorblind10's blue), 5.6:1 against the white figure: WCAG 2.1's 1.4.11 asks 3:1 of
# what carries meaning in a graphic.
BAR_COLOUR = "#006BA4"
TEXT_COLOUR = "#000000"
WIDTH = 1200  # pixels, as the Matplotlib figure it replaces (12 inches at 100 dpi)
ROW = 28  # pixels per test cell in the pass-rate panel
CHAR = 7.5  # pixels a character of the labels takes, about (13 px sans-serif)


def _nice_step(span: float, ticks: int) -> float:
    """A step of 1, 2, 2.5 or 5 times a power of ten that cuts `span` into about `ticks` parts."""
    raw = span / max(ticks, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)


def histogram(values: list[float], bins: int, top: float) -> list[int]:
    """How many of `values` fall in each of `bins` equal bins over [0, `top`] (the last one closed, as
    Matplotlib's ``hist`` counts; values outside are left out)."""
    counts = [0] * bins
    for v in values:
        if 0 <= v <= top:
            counts[min(int(v / top * bins), bins - 1) if top > 0 else 0] += 1
    return counts


def figure_layout(handed_in: list[float], max_score: float, order: list[str], rates: list[float]) -> dict:
    """Where everything of the report's figure goes (the context of ``templates/report_figure.svg.j2``): the score
    histogram of `handed_in` (scores out of `max_score`) and, for each test cell in `order`, its pass rate in
    `rates` (a share in [0, 1])."""
    height = max(300, ROW * len(order)) + 95
    top, frame_height = 35, max(300, ROW * len(order))
    labels_width = min(max((len(g) for g in order), default=0) * CHAR + 15, 380)

    bins = min(20, int(max_score) + 1)
    counts = histogram(handed_in, bins, max_score)
    y_top = max(max(counts, default=0), 1)
    y_step = max(1, math.ceil(_nice_step(y_top, 6)))
    y_max = y_top * 1.05
    left = {"x": 75.0, "y": top, "width": 375.0, "height": frame_height}
    bin_width = left["width"] / bins
    x_step = _nice_step(max_score, 6) if max_score > 0 else 1.0

    def y_of(count: float) -> float:
        return round(top + frame_height * (1 - count / y_max), 1)

    histogram_panel = {
        "title": "score distribution", "x_label": f"score (of {max_score:g})", "y_label": "notebooks handed in",
        "frame": left, "labels": [],
        "bars": [{"x": round(left["x"] + i * bin_width, 1), "y": y_of(c), "width": round(bin_width, 1),
                  "height": round(top + frame_height - y_of(c), 1)} for i, c in enumerate(counts) if c],
        "x_ticks": [{"at": round(left["x"] + left["width"] * k * x_step / max_score, 1) if max_score > 0 else left["x"],
                     "label": f"{k * x_step:g}"} for k in range(int(max_score / x_step + 1e-9) + 1)],
        "y_ticks": [{"at": y_of(k * y_step), "label": str(k * y_step)} for k in range(int(y_top // y_step) + 1)],
    }
    x0 = round(left["x"] + left["width"] + 40 + labels_width, 1)
    right = {"x": x0, "y": top, "width": round(WIDTH - 25 - x0, 1), "height": frame_height}
    row = frame_height / max(len(order), 1)
    rate_panel = {
        "title": "pass rate per test cell", "x_label": "share of notebooks handed in that pass", "y_label": "",
        "frame": right, "y_ticks": [],
        "bars": [{"x": x0, "y": round(top + (i + 0.1) * row, 1), "width": round(right["width"] * r, 1),
                  "height": round(0.8 * row, 1)} for i, r in enumerate(rates) if r > 0],
        "labels": [{"at": round(top + (i + 0.5) * row, 1), "label": g} for i, g in enumerate(order)],
        "x_ticks": [{"at": round(x0 + right["width"] * k / 5, 1), "label": f"{k / 5:.1f}"} for k in range(6)],
    }
    return {"width": WIDTH, "height": height, "colour": BAR_COLOUR, "text_colour": TEXT_COLOUR,
            "panels": [histogram_panel, rate_panel]}


def _figure(handed_in: list[float], max_score: float, order: list[str], rates: list[float]) -> str:
    """The score histogram and the pass rate per test cell, side by side: an SVG as a ``data:`` URI (drawn from a
    template: no plotting library to import, about a second less per grading run than Matplotlib's PNG)."""
    svg = render("report_figure.svg.j2", **figure_layout(handed_in, max_score, order, rates))
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def late_context(lateness: dict[tuple[str, str], Lateness] | None) -> dict:
    """The report's late section: the submissions handed in late (most late first), those whose time is unknown,
    those whose time is a zip entry's date, those an LMS marked late under its own policy (Canvas), and those whose
    notebook is dated after its nbgrader timestamp.txt (flagged, not penalised)."""
    found = sorted((lateness or {}).values(), key=lambda lt: (lt.assignment, lt.student))

    def row(lt: Lateness) -> dict:
        return {"student": lt.student, "assignment": lt.assignment, "due": lt.due.isoformat() if lt.due else "",
                "extension": lt.extension, "submitted_at": lt.submitted_at.isoformat() if lt.submitted_at else "",
                "late_by": lt.late_by_hours, "penalty": lt.penalty, "raw": lt.raw_score, "final": lt.score,
                "source": lt.columns()["time_source"]}
    late = sorted((lt for lt in found if lt.seconds_late is not None and lt.seconds_late > 0),
                  key=lambda lt: -lt.seconds_late)
    return {"rule": next((lt.rule for lt in found if lt.rule), ""), "late": [row(lt) for lt in late],
            "unknown": [row(lt) for lt in found if lt.unknown],
            "lms_marked": [row(lt) for lt in found if lt.lms_policy and lt.marked_late],
            "dated_after_stamp": [{**row(lt), "dated": lt.dated_after_stamp.astimezone(
                lt.submitted_at.tzinfo if lt.submitted_at else None).isoformat(timespec="seconds")}
                                  for lt in found if lt.dated_after_stamp is not None]}


def report_context(rows: list[CellResult], seconds: float, graded: int, notes: dict | None = None,
                   lateness: dict[tuple[str, str], Lateness] | None = None, similarity: dict | None = None) -> dict:
    """What the report template gets (see its header), from the rows of scores.csv, the run's figures, the late
    penalties (:func:`late_context`) and the similarity report's summary."""
    by_assignment: dict[str, list[CellResult]] = defaultdict(list)
    for r in rows:
        by_assignment[r.assignment].append(r)
    found = submissions(rows)
    assignments = []
    for assignment, cells in sorted(by_assignment.items()):
        own = [s for s in found.values() if s.assignment == assignment]
        max_score = max(s.max_score for s in own)
        absent = sorted(s.student for s in own if not s.handed_in)
        handed_in = [s.raw for s in own if s.handed_in]
        order = list(dict.fromkeys(r.grade_id for r in cells))
        passed = Counter(r.grade_id for r in cells if r.status == Status.PASSED)
        counted = Counter(r.grade_id for r in cells if r.status != Status.MISSING)
        rates = [passed[g] / counted[g] if counted[g] else 0.0 for g in order]
        assignments.append({
            "assignment": assignment, "handed_in": len(handed_in), "max_score": max_score, "missing": absent,
            "mean": sum(handed_in) / len(handed_in) if handed_in else 0.0,
            "figure": _figure(handed_in, max_score, order, rates),
            "alt": f"Score histogram and pass rate per test cell for {assignment}",
            "hardest": [{"grade_id": g, "rate": rate} for rate, g in sorted(zip(rates, order)) if rate < 1][:3],
        })
    statuses = Counter(r.status for r in rows)
    return {
        "students": len({r.student_id for r in rows}), "assignments": assignments,
        "notebooks_handed_in": sum(s.handed_in for s in found.values()),
        "notebooks_missing": sum(not s.handed_in for s in found.values()),
        "graded": graded, "seconds": seconds, "reused": graded < sum(s.handed_in for s in found.values()),
        "statuses": [{"status": str(s), "meaning": s.meaning, "count": n} for s, n in sorted(statuses.items())],
        "notes": [{"student": s, "assignment": a, "note": n}
                  for (s, a), lines in sorted((notes or {}).items()) for n in lines],
        "late": late_context(lateness),
        "similarity": similarity,  # {pairs, threshold, file} of pages/similarity.py, or None (not written)
    }


def write_report(rows: list[CellResult], path: Path, seconds: float, graded: int, notes: dict | None = None,
                 lateness: dict[tuple[str, str], Lateness] | None = None, similarity: dict | None = None) -> Path:
    """Write the instructor's HTML report to `path`: score distributions, pass rate per test cell, problems, run time.

    `graded` is the number of notebooks this run graded (the others were
    reused) in `seconds`. `notes` (as for :func:`autograde.pages.feedback.write_feedback`)
    are listed at the end: the notebooks the grader repaired, and what happened as they ran. `lateness`
    (:func:`autograde.results.late.assess`) lists the late students and those whose submission time is unknown.
    `similarity`, the summary :func:`autograde.pages.similarity.write_similarity` returns, links the similarity
    report.
    """
    path.write_text(render("report.html.j2", **report_context(rows, seconds, graded, notes, lateness, similarity)))
    return path
