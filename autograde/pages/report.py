"""The instructor's report: score distribution per assignment, pass rate per test cell, statuses, notes, run time.

Figures are drawn with Matplotlib's object-oriented API (no pyplot, no backend
chosen, nothing done at import) and inlined as ``data:`` URIs, so the page
needs no network and no file beside it. The layout is ``templates/report.html.j2``.
"""
from __future__ import annotations

import base64
import io
from collections import Counter, defaultdict
from pathlib import Path

from ..results.classify import CellResult, Status
from ..results.late import Lateness
from ..results.totals import submissions
from .render import render


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


# The bars' colour (tableau-colorblind10's blue), 5.6:1 against the white figure: WCAG 2.1's 1.4.11 asks 3:1 of
# what carries meaning in a graphic. The style's other colours are never drawn (its orange is 2.5:1).
BAR_COLOUR = "#006BA4"


def _draw(handed_in: list[float], max_score: float, order: list[str], rates: list[float]):
    """The score histogram and the pass rate per test cell, side by side: a Matplotlib Figure."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(12, max(3.0, 0.28 * len(order))), layout="constrained", facecolor="white")
    ax0, ax1 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.4]})
    ax0.hist(handed_in, bins=min(20, int(max_score) + 1), range=(0, max_score), color=BAR_COLOUR)
    ax0.set(xlabel=f"score (of {max_score:g})", ylabel="notebooks handed in", title="score distribution")
    ax0.yaxis.get_major_locator().set_params(integer=True)
    ax1.barh(range(len(order)), rates, color=BAR_COLOUR)
    ax1.set(yticks=range(len(order)), yticklabels=order, xlim=(0, 1),
            xlabel="share of notebooks handed in that pass", title="pass rate per test cell")
    ax1.invert_yaxis()
    return fig


def _figure(handed_in: list[float], max_score: float, order: list[str], rates: list[float]) -> str:
    """:func:`_draw`'s figure as a PNG data: URI."""
    return _png(_draw(handed_in, max_score, order, rates))


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
