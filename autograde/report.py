"""HTML feedback for each student and a report for the instructor, from the rows of scores.csv.

Feedback shows, for every test cell, the points and the first line of the
failure message, which the tests write for students; it never shows test code,
so hidden tests stay hidden.
"""
from __future__ import annotations

import base64
import html
import io
from collections import Counter, defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = """<style>
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; width: 100%; margin-bottom: 2rem; }
th, td { border-bottom: 1px solid #ddd; padding: 0.35rem 0.5rem; text-align: left; vertical-align: top; }
.passed { color: #1b7837; } .failed, .error, .timeout, .missing, .crashed, .tampering { color: #b2182b; }
</style>"""

EXPLAIN = {
    "passed": "all points",
    "failed": "a test found a mistake",
    "error": "the code raised an error or could not run",
    "timeout": "a cell ran past the time limit",
    "crashed": "the kernel died (os._exit, a crash or memory)",
    "tampering": "the code under test changed the test's tools: no points",
    "missing": "no notebook was handed in",
}


def _page(title: str, body: str) -> str:
    return f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>{STYLE}</head><body>{body}</body></html>"


def write_feedback(rows, folder: Path, notes: dict | None = None, lms_ids: dict | None = None) -> list[Path]:
    """Write ``folder/<student_id>.html`` for every student; returns the paths.

    `notes` maps (student_id, assignment) to sentences on what the grader
    repaired or flagged in that notebook; they are shown above its table.
    `lms_ids` maps student ids to the LMS's user ids, shown beside them.
    """
    notes, lms_ids = notes or {}, lms_ids or {}
    folder.mkdir(parents=True, exist_ok=True)
    by_student: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        by_student[r.student_id][r.assignment].append(r)
    written = []
    for student, assignments in sorted(by_student.items()):
        parts = [f"<h1>Feedback for {html.escape(student)}</h1>"]
        if lms_ids.get(student):
            parts.append(f"<p>LMS user id: {html.escape(lms_ids[student])}</p>")
        for assignment, cells in assignments.items():
            score, total = sum(c.score for c in cells), sum(c.max_score for c in cells)
            parts.append(f"<h2>{html.escape(assignment)}: {score:g} / {total:g} points</h2>")
            if notes.get((student, assignment)):
                parts.append("<p>About your notebook:</p><ul>"
                             + "".join(f"<li>{html.escape(n)}</li>" for n in notes[(student, assignment)]) + "</ul>")
            parts.append("<table><tr><th>test</th><th>points</th><th>result</th><th>what to look at</th></tr>")
            for c in cells:
                parts.append(f"<tr><td>{html.escape(c.grade_id)}</td><td>{c.score:g} / {c.max_score:g}</td>"
                             f"<td class='{c.status}'>{html.escape(EXPLAIN.get(c.status, c.status))}</td>"
                             f"<td>{html.escape(c.message)}</td></tr>")
            parts.append("</table>")
        path = folder / f"{student}.html"
        path.write_text(_page(f"Feedback: {student}", "\n".join(parts)))
        written.append(path)
    return written


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


def write_report(rows, path: Path, seconds: float, notebooks: int, notes: dict | None = None) -> Path:
    """Write the instructor's HTML report: score distributions, pass rate per test cell, problems, run time.

    `notes` (as for :func:`write_feedback`) are listed at the end: the
    notebooks the grader repaired, and those flagged for tampering.
    """
    plt.style.use("tableau-colorblind10")
    by_assignment: dict[str, list] = defaultdict(list)
    for r in rows:
        by_assignment[r.assignment].append(r)
    statuses = Counter(r.status for r in rows)
    pairs = {(r.student_id, r.assignment) for r in rows}
    # A notebook is missing when every row of it is (a single row can be missing from a notebook handed in).
    missing = pairs - {(r.student_id, r.assignment) for r in rows if r.status != "missing"}
    parts = ["<h1>Grading report</h1>",
             f"<p>{_count(len({r.student_id for r in rows}), 'student')}, {_count(len(by_assignment), 'assignment')}: "
             f"{_count(len(pairs) - len(missing), 'notebook')} handed in, {len(missing)} missing. "
             f"This run graded {_count(notebooks, 'notebook')} in {seconds:.0f} s"
             + (f" ({seconds / notebooks:.1f} s per notebook)" if notebooks else "")
             + ("; the others were unchanged since the last run" if notebooks < len(pairs) - len(missing) else "")
             + ".</p>",
             "<table><tr><th>status</th><th>meaning</th><th>test cells</th></tr>"
             + "".join(f"<tr><td class='{s}'>{s}</td><td>{EXPLAIN.get(s, '')}</td><td>{n}</td></tr>"
                       for s, n in sorted(statuses.items()))
             + "</table>"]
    for assignment, cells in sorted(by_assignment.items()):
        totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        for r in cells:
            totals[r.student_id][0] += r.score
            totals[r.student_id][1] += r.max_score
        max_score = max(t[1] for t in totals.values())
        absent = sorted(s for s, a in missing if a == assignment)
        handed_in = [t[0] for student, t in totals.items() if student not in absent]
        order = list(dict.fromkeys(r.grade_id for r in cells))
        passed = Counter(r.grade_id for r in cells if r.status == "passed")
        counted = Counter(r.grade_id for r in cells if r.status != "missing")
        rates = [passed[g] / counted[g] if counted[g] else 0.0 for g in order]

        fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(12, max(3.0, 0.28 * len(order))),
                                       gridspec_kw={"width_ratios": [1, 1.4]}, layout="constrained")
        ax0.hist(handed_in, bins=min(20, int(max_score) + 1), range=(0, max_score))
        ax0.set(xlabel=f"score (of {max_score:g})", ylabel="notebooks handed in", title="score distribution")
        ax0.yaxis.get_major_locator().set_params(integer=True)
        ax1.barh(range(len(order)), rates)
        ax1.set(yticks=range(len(order)), yticklabels=order, xlim=(0, 1), xlabel="share of notebooks handed in that pass",
                title="pass rate per test cell")
        ax1.invert_yaxis()
        alt = f"Score histogram and pass rate per test cell for {assignment}"
        mean = f"mean {sum(handed_in) / len(handed_in):.1f} of {max_score:g}" if handed_in else "no scores"
        parts.append(f"<h2>{html.escape(assignment)}</h2>"
                     f"<p>{_count(len(handed_in), 'notebook')} handed in ({mean}); "
                     + (f"{len(absent)} missing, scored 0" if absent else "none missing")
                     + (f": {html.escape(', '.join(absent))}" if 0 < len(absent) <= 20 else "") + ".</p>"
                     f"<img alt='{html.escape(alt)}' src='data:image/png;base64,{_png(fig)}' style='max-width:100%'>")
        hardest = [(rate, g) for rate, g in sorted(zip(rates, order)) if rate < 1][:3]
        parts.append("<p>Where the class struggles most: "
                     + ", ".join(f"{html.escape(g)} ({rate:.0%} pass)" for rate, g in hardest) + ".</p>" if hardest
                     else "<p>Every test cell passed in every notebook handed in.</p>")
    if notes:
        parts.append("<h2>Notebooks repaired or flagged</h2><table><tr><th>student</th><th>assignment</th><th>note</th></tr>"
                     + "".join(f"<tr><td>{html.escape(s)}</td><td>{html.escape(a)}</td><td>{html.escape(n)}</td></tr>"
                               for (s, a), lines in sorted(notes.items()) for n in lines) + "</table>")
    path.write_text(_page("Grading report", "\n".join(parts)))
    return path
