"""The CPU one grading command takes, whole (not a test).

    .venv/bin/python -m benchmarks.command_cost [--assignment 01-weighted-sum] [--notebooks 1] [--untouched]
                                                [--jobs 2] [--repeat 5] [--checkout DIR ...] [-- OPTION ...]

Grades `--notebooks` copies of a chapter's reference notebook (or of the
untouched student notebook) with ``python -m autograde grade`` into a fresh
folder, `--repeat` times, and prints the best and the median CPU time of the
whole machine over each run (user and system, from /proc/stat: the command,
its workers, checkers and sandboxed kernels, which no rusage of the command
sees) and the best wall time. Run it on an otherwise idle machine. With
several `--checkout` folders (git worktrees of other commits), the runs of
each alternate, so that they compare under the same conditions; options after
``--`` go to the grading command.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograde.course import REPO
from tests.support.synthetic import completed_notebook, student_notebook, write_submission


def machine_cpu() -> float:
    """Seconds of CPU the whole machine has spent (user, nice, system, irq, softirq) since it booted."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (fields[0] + fields[1] + fields[2] + fields[5] + fields[6]) / os.sysconf("SC_CLK_TCK")


def one_run(checkout: Path, assignment: str, notebooks: int, untouched: bool, jobs: int, options: list[str]
            ) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one grading command run from `checkout`."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for i in range(notebooks):
            nb = student_notebook(assignment) if untouched else completed_notebook(assignment)
            write_submission(nb, tmp / "class", f"student-{i}", assignment)
        cpu, start = machine_cpu(), time.perf_counter()
        subprocess.run([sys.executable, "-m", "autograde", "grade", str(tmp / "class"), "--out", str(tmp / "out"),
                        "--jobs", str(jobs), "--quiet", *options], cwd=checkout, check=True, capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(checkout)})
        return machine_cpu() - cpu, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assignment", default="01-weighted-sum")
    parser.add_argument("--notebooks", type=int, default=1)
    parser.add_argument("--untouched", action="store_true", help="grade the student notebook as released")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--checkout", type=Path, action="append", help="a checkout to run the grader from")
    parser.add_argument("options", nargs="*", help="options for the grading command (after --)")
    args = parser.parse_args()
    checkouts = args.checkout or [REPO]
    runs: dict[Path, list[tuple[float, float]]] = {c: [] for c in checkouts}
    for _ in range(args.repeat):
        for checkout in checkouts:
            runs[checkout].append(one_run(checkout, args.assignment, args.notebooks, args.untouched, args.jobs,
                                          args.options))
    what = f"{args.notebooks} {'untouched' if args.untouched else 'reference'} notebook(s) of {args.assignment}"
    for checkout, found in runs.items():
        cpu = [c for c, _ in found]
        print(f"{checkout}: {what}, --jobs {args.jobs} {' '.join(args.options)}: CPU best {min(cpu):.2f} s, "
              f"median {statistics.median(cpu):.2f} s; wall best {min(w for _, w in found):.2f} s "
              f"({args.repeat} runs)", flush=True)


if __name__ == "__main__":
    main()
