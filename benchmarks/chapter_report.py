"""Measure each exercise notebook: graded run time, points per exercise, mutants killed.

    .venv/bin/python -m benchmarks.chapter_report

For each assignment it (1) executes the instructor notebook (reference
solutions and hidden tests) with nbclient on one CPU core (the kernel is pinned
to core 0 with one thread) and reports the wall time, kernel start included,
and (2) grades the reference, the untouched student notebook
and every mutant under tests/mutants/ with ``python -m autograde grade`` and
reports the points of each exercise and how many of its mutants lose points.
"""
from __future__ import annotations

import csv
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from nbclient import NotebookClient

from autograde.course import assignment_ids, cells_checking, graded_cell_ids, solution_cell_ids, source_notebook
from tests.support.synthetic import mutant_files, mutant_student, write_reference_class

REPO = Path(__file__).resolve().parent.parent

MUTANTS = REPO / "tests" / "mutants"


def graded_run_seconds(assignment: str) -> float:
    """Wall time to execute the reference notebook with its hidden tests, kernel start included."""
    nb = source_notebook(assignment)
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cores)})  # the kernel inherits one core
    threads = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    os.environ.update({k: "1" for k in threads})
    try:
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": tmp}}).execute()
        return time.perf_counter() - start
    finally:
        os.sched_setaffinity(0, cores)
        for k, v in threads.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def main() -> None:
    assignments = assignment_ids()
    for assignment in assignments:
        runs = [graded_run_seconds(assignment) for _ in range(3)]
        print(f"{assignment}: graded run of the reference notebook {min(runs):.1f} s (best of 3; {', '.join(f'{r:.1f}' for r in runs)})")

    with tempfile.TemporaryDirectory() as tmp:
        submissions, out = Path(tmp) / "submitted", Path(tmp) / "out"
        write_reference_class(submissions, assignments, MUTANTS)
        count = sum(1 for _ in submissions.glob("*/*/*.ipynb"))
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "autograde", "grade", str(submissions), "--out", str(out), "--quiet"],
                       cwd=REPO, check=True, capture_output=True)
        seconds = time.perf_counter() - start
        print(f"graded {count} notebooks in {seconds:.0f} s ({seconds / count:.1f} s per notebook, "
              f"{os.cpu_count()} workers)")
        with open(out / "scores.csv", newline="") as f:
            scores = {(r["student_id"], r["assignment"], r["grade_id"]): r for r in csv.DictReader(f)}

    for assignment in assignments:
        tests = graded_cell_ids(assignment)
        mutants = defaultdict(list)
        for a, grade_id, path in mutant_files(MUTANTS):
            if a == assignment:
                mutants[grade_id].append(path)
        print(f"\n{assignment}\n{'exercise':<20} {'points':>6} {'mutants':>8} {'killed':>7}  points lost by each mutant")
        total = 0.0
        for grade_id in solution_cell_ids(assignment):
            cells = cells_checking(grade_id, tests)
            points = sum(float(scores[("reference", assignment, c)]["max_score"]) for c in cells)
            total += points
            lost = []
            for path in mutants[grade_id]:
                got = sum(float(scores[(mutant_student(grade_id, path), assignment, c)]["score"]) for c in cells)
                lost.append((path.stem, points - got))
            killed = sum(1 for _, p in lost if p > 0)
            detail = ", ".join(f"{name} -{p:g}" for name, p in lost)
            print(f"{grade_id:<20} {points:>6g} {len(lost):>8} {killed:>7}  {detail}")
        print(f"{'total':<20} {total:>6g}")


if __name__ == "__main__":
    main()
