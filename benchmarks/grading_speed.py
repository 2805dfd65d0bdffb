"""Benchmark the grading command on a synthetic class (not a test).

    .venv/bin/python -m benchmarks.grading_speed [--students 100] [--repeat 3] [--jobs 1,2] [--no-bare]
                                                 [--assignments 01-weighted-sum,04-long-sequences]
                                                 [--references-only]

The class has one notebook per student, spread over the available chapters:
three in five complete the reference solution, one in five is a mutant (a
plausible wrong answer from tests/mutants/), one in five is broken (the
untouched student notebook); with --references-only every notebook completes
the reference solution. It prints the seconds per notebook of
``python -m autograde grade`` with --jobs 1 and --jobs 2, the time of executing
the same notebooks bare with nbclient, one after another, the overhead of
grading (--jobs 1 against bare) and the speedup of --jobs 2 over --jobs 1.
With --repeat K each time is the best of K runs, the runs of each side
interleaved (each grading run into a fresh folder, so nothing is reused). Wall
time is the comparison. CPU time is printed too: for bare execution that of
nbclient and its kernels; for grading only that of the processes reaped up to
the command (its workers and checkers), since kernels in the sandbox are not,
so it is no comparison with bare execution.

"The same notebooks" are what nbgrader executes: the student's answers in the
instructor's notebook, hidden tests included. Bare execution has no nbgrader,
no sandbox, no guard and no gradebook; it runs in a plain kernel with NumPy and
PyTorch free to use every core.
"""
from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from autograde.course import assignment_ids, source_notebook
from tests.support.synthetic import completed_notebook, mutant_files, student_notebook, write_submission

REPO = Path(__file__).resolve().parent.parent


def make_class(folder: Path, students: int, assignments: list[str] | None = None,
               references_only: bool = False) -> list[Path]:
    """Write the synthetic class into `folder` (over `assignments`, default all; every notebook the reference where
    `references_only`); returns the notebooks."""
    assignments = assignments or assignment_ids()
    mutants = {a: [(g, p) for a2, g, p in mutant_files(REPO / "tests" / "mutants") if a2 == a] for a in assignments}
    written = []
    for i in range(students):
        assignment = assignments[i % len(assignments)]
        kind = 0 if references_only else i % 5
        if kind == 3 and mutants[assignment]:
            grade_id, path = mutants[assignment][(i // 5) % len(mutants[assignment])]
            nb = completed_notebook(assignment, {grade_id: path.read_text()})
        elif kind == 4:
            nb = student_notebook(assignment)
        else:
            nb = completed_notebook(assignment)
        written.append(write_submission(nb, folder, f"student{i:03d}", assignment))
    return written


def as_executed(nb: nbformat.NotebookNode, assignment: str) -> nbformat.NotebookNode:
    """The instructor's notebook of `assignment` with the answers of `nb`: what grading executes."""
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    full = source_notebook(assignment)
    for cell in full.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    return full


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def grade_seconds(submissions: Path, out: Path, jobs: int) -> tuple[float, float]:
    """Wall time and CPU time of one grading run of `submissions` into the fresh folder `out` (the CPU time of the
    whole process tree: the command, its workers, kernels and checkers, each reaped by its parent)."""
    start, cpu = time.perf_counter(), _cpu(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "autograde", "grade", str(submissions), "--out", str(out),
                    "--jobs", str(jobs), "--quiet"], cwd=REPO, check=True, capture_output=True)
    return time.perf_counter() - start, _cpu(resource.RUSAGE_CHILDREN) - cpu


def bare_seconds(notebooks: list[Path]) -> tuple[float, float]:
    """Wall time and CPU time of executing `notebooks` (as grading would) one after another in plain kernels (the
    CPU time of this process, which runs nbclient, and of the kernels it reaped)."""
    prepared = [as_executed(nbformat.read(path, as_version=4), path.parent.name) for path in notebooks]
    start, cpu = time.perf_counter(), _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN)
    for nb in prepared:
        with tempfile.TemporaryDirectory() as tmp:
            NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                           resources={"metadata": {"path": tmp}}).execute(stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN) - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=1, help="report the best of this many runs of each")
    parser.add_argument("--jobs", default="1,2", help="comma-separated --jobs values to time")
    parser.add_argument("--no-bare", action="store_true", help="do not time bare execution")
    parser.add_argument("--assignments", default="", help="comma-separated chapters (default: all)")
    parser.add_argument("--references-only", action="store_true",
                        help="every notebook completes the reference (no mutants, no untouched notebooks)")
    args = parser.parse_args()
    chosen = [a for a in args.assignments.split(",") if a] or assignment_ids()
    jobs = [int(j) for j in args.jobs.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        notebooks = make_class(tmp / "class", args.students, chosen, args.references_only)
        n = len(notebooks)
        # Interleaved (bare, then each --jobs, then again), so that a change in the machine's load between runs
        # touches both sides alike; each figure is the best of its runs, wall and CPU time each.
        bare_runs, grade_runs = [], {j: [] for j in jobs}
        for k in range(args.repeat):
            if not args.no_bare:
                bare_runs.append(bare_seconds(notebooks))
            for j in jobs:
                grade_runs[j].append(grade_seconds(tmp / "class", tmp / f"out{j}-{k}", j))
    kinds = "reference notebooks" if args.references_only else "notebooks (references, mutants, untouched)"
    print(f"{n} {kinds} across {len(chosen)} chapters, best of {args.repeat} (wall time; CPU time of every process)")
    bare = (min(w for w, _ in bare_runs), min(c for _, c in bare_runs)) if bare_runs else None
    if bare is not None:
        print(f"bare nbclient, one at a time: {bare[0]:6.1f} s ({bare[0] / n:.2f} s per notebook); CPU {bare[1]:6.1f} s")
    for j, runs in grade_runs.items():
        wall, cpu = min(w for w, _ in runs), min(c for _, c in runs)
        extra = (f", overhead {wall / bare[0]:.2f}x wall" if j == 1 and bare else
                 f", speedup {min(w for w, _ in grade_runs[1]) / wall:.2f}x" if j != 1 and 1 in grade_runs else "")
        print(f"grade --jobs {j}:{' ' * 15}{wall:6.1f} s ({wall / n:.2f} s per notebook); CPU of the grading "
              f"processes {cpu:6.1f} s (kernels in the sandbox not counted){extra}")


if __name__ == "__main__":
    main()
