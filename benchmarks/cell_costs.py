"""Where grading's time goes, cell by cell (not a test).

    .venv/bin/python -m benchmarks.cell_costs 05-transformer [--top 12]

Grades the reference notebook of one chapter with ``python -m autograde grade
--jobs 1`` and executes the same notebook bare with nbclient (as
benchmarks/grading_speed.py does), then prints each cell's wall time both ways
(nbclient's own timestamps: from the kernel starting the cell to its reply),
largest difference first, and the sums. What is not in any cell (kernel and
checker start, nbgrader's bookkeeping, pages) is the whole run's time less
the sum of the cells.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from benchmarks.grading_speed import REPO, as_executed
from tests.support.synthetic import completed_notebook, write_submission


def cell_seconds(nb: nbformat.NotebookNode) -> dict[str, float]:
    """{cell name: seconds from execute_input to the reply} of an executed notebook (nbclient's timing)."""
    found = {}
    for index, cell in enumerate(nb.cells):
        timing = cell.get("metadata", {}).get("execution", {})
        start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if start and end:
            name = cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell {index}"
            found[name] = (datetime.fromisoformat(end.replace("Z", "+00:00"))
                           - datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("assignment")
    parser.add_argument("--top", type=int, default=12, help="cells to list")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = write_submission(completed_notebook(args.assignment), tmp / "class", "reference", args.assignment)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "autograde", "grade", str(tmp / "class"), "--out", str(tmp / "out"),
                        "--jobs", "1", "--quiet", "--no-similarity"], cwd=REPO, check=True, capture_output=True)
        graded_total = time.perf_counter() - start
        [executed] = (tmp / "out").glob(f"nbgrader/worker-*/autograded/reference/{args.assignment}/*.ipynb")
        graded = cell_seconds(nbformat.read(executed, as_version=4))
        bare_nb = as_executed(nbformat.read(path, as_version=4), args.assignment)
        start = time.perf_counter()
        NotebookClient(bare_nb, timeout=600, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(tmp)}}).execute(stderr=subprocess.DEVNULL)
        bare_total = time.perf_counter() - start
        bare = cell_seconds(bare_nb)
    rows = sorted(graded, key=lambda c: graded[c] - bare.get(c, 0.0), reverse=True)
    print(f"{args.assignment}: graded {graded_total:.1f} s in all, {sum(graded.values()):.1f} s in cells; "
          f"bare {bare_total:.1f} s in all, {sum(bare.values()):.1f} s in cells")
    for name in rows[:args.top]:
        print(f"  {name:40s} graded {graded[name]:6.2f} s  bare {bare.get(name, float('nan')):6.2f} s  "
              f"+{graded[name] - bare.get(name, 0.0):.2f} s")


if __name__ == "__main__":
    main()
