"""Each submission's totals are computed once (autograde/results/totals.py) and every writer reads them: grades.csv,
the late penalty and the report agree on the raw score, the maximum and whether a notebook was handed in."""
import csv

from autograde.course import assignment_ids
from autograde.pages.report import report_context
from autograde.results.classify import CellResult, Status
from autograde.results.late import LatePolicy, assess
from autograde.results.outputs import write_csvs
from autograde.results.totals import submissions

FIRST = assignment_ids()[0]
ROWS = [CellResult("ann", FIRST, "a", 1.0, 2.0, Status.PASSED, ""),
        CellResult("ann", FIRST, "b", 0.0, 3.0, Status.MISSING, ""),  # (one cell missing: still handed in)
        CellResult("bob", FIRST, "a", 0.0, 2.0, Status.MISSING, ""),
        CellResult("bob", FIRST, "b", 0.0, 3.0, Status.MISSING, "")]


def test_the_totals():
    found = submissions(ROWS)
    assert [(s.student, s.raw, s.max_score, s.handed_in) for s in found.values()] == [
        ("ann", 1.0, 5.0, True), ("bob", 0.0, 5.0, False)]


def test_every_writer_reads_the_same_totals(tmp_path):
    write_csvs(ROWS, tmp_path)
    with open(tmp_path / "grades.csv", newline="") as f:
        grades = {r["student_id"]: (float(r["score"]), float(r["max_score"])) for r in csv.DictReader(f)}
    assert grades == {"ann": (1.0, 5.0), "bob": (0.0, 5.0)}
    late = assess(ROWS, {}, LatePolicy(due="2026-03-01T23:59+01:00", late_penalty="10%/day"))
    assert late[("ann", FIRST)].unknown and not late[("bob", FIRST)].unknown, "only a notebook handed in has a time"
    assert (late[("ann", FIRST)].raw_score, late[("ann", FIRST)].max_score) == (1.0, 5.0)
    context = report_context(ROWS, 1.0, 1)
    assert (context["notebooks_handed_in"], context["notebooks_missing"]) == (1, 1)
    [chapter] = context["assignments"]
    assert (chapter["handed_in"], chapter["missing"], chapter["max_score"], chapter["mean"]) == (1, ["bob"], 5.0, 1.0)
