"""Grade a chapter's reference, untouched notebook, every mutant and every alternative with the real grader, and
compare the verdicts (and messages) with an earlier run's.

    .venv/bin/python -m benchmarks.verdicts_both_ways 06-beyond-text /tmp/after.json [--against /tmp/before.json]

Used to move a chapter's tests from the kernel to the checker: grade once with the chapter left out of
``autograde.course.CHECKED_OUTSIDE`` (in the kernel), once with it in, and compare. Prints each student and cell
whose verdict differs (with ``--messages``, whose message differs), and how many.
"""
from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.synthetic import write_reference_class

REPO = Path(__file__).resolve().parent.parent


def grade(assignment: str) -> dict[str, list]:
    """{"student|cell": [passed, score, message]} for every student of `assignment`'s reference class."""
    with tempfile.TemporaryDirectory(prefix="both-ways-") as tmp:
        folder = Path(tmp)
        write_reference_class(folder / "submitted", [assignment], REPO / "tests" / "mutants",
                              REPO / "tests" / "alternatives")
        subprocess.run([sys.executable, "-m", "autograde", "grade", str(folder / "submitted"), "--out",
                        str(folder / "out"), "--quiet"], cwd=REPO, check=True)
        with open(folder / "out" / "scores.csv", newline="") as f:
            return {f"{r['student_id']}|{r['grade_id']}": [float(r["score"]) >= float(r["max_score"]), r["score"],
                                                            r["message"]] for r in csv.DictReader(f)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment")
    parser.add_argument("out", type=Path, help="where this run's verdicts are written (JSON)")
    parser.add_argument("--against", type=Path, help="an earlier run's JSON to compare with")
    parser.add_argument("--messages", action="store_true", help="compare the messages too")
    args = parser.parse_args()
    now = grade(args.assignment)
    args.out.write_text(json.dumps(now, indent=0, sort_keys=True))
    if args.against is None:
        print(f"{len(now)} verdicts written to {args.out}")
        return
    before = json.loads(args.against.read_text())
    differ = [key for key in sorted(before) if key not in now or before[key][0] != now[key][0]
              or (args.messages and before[key][2] != now[key][2])]
    for key in differ:
        print(f"{key}\n   before: {before[key][0]} {before[key][2][:300]}\n   now:    {now.get(key, [None, '', ''])[0]} "
              f"{now.get(key, [None, '', ''])[2][:300]}")
    print(f"{len(differ)} of {len(before)} differ")


if __name__ == "__main__":
    main()
