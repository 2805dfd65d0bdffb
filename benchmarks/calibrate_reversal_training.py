"""Calibrate the graded training of exercise 2 (the reversal task) over seeds and correct implementations.

    .venv/bin/python -m benchmarks.calibrate_reversal_training [--seeds 20] [--jobs 2] [--wrong]

The hidden tests of ``02-additive-attention`` grade the trained model's digit
accuracy and the share of output digits whose largest attention weight is on
the true source position. A correct answer must pass on every seed, whatever
the order in which it creates its modules, so this script trains the
notebook's own ``train_reversal`` (one thread, like a grading kernel) for each
seed, with the reference and with every correct alternative under
``tests/alternatives/02-additive-attention/`` for the two cells that decide
the model (``AdditiveAttention`` and ``decoder_attention``, which differ in
module-creation order and formulation), and prints the distribution of both
numbers and the time per run. With ``--wrong`` it also trains the wrong
answers under ``tests/mutants/`` for those cells (3 seeds each). The test
thresholds sit below the smallest value of any correct answer and above what
the wrong ones reach.
"""
from __future__ import annotations

import argparse
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ASSIGNMENT = "02-additive-attention"
CELLS = ("AdditiveAttention", "decoder_attention")  # the solution cells that decide the trained model
TESTS = Path(__file__).resolve().parent.parent / "tests"


def answers(kind: str) -> dict[str, tuple[str, str]]:
    """The alternatives ("alternatives") or mutants ("mutants") of CELLS: name -> (cell, file text)."""
    found = {}
    for cell in CELLS:
        for path in sorted((TESTS / kind / ASSIGNMENT / cell).glob("*.py")):
            found[f"{cell}/{path.stem}"] = (cell, path.read_text())
    return found


def load_notebook(answer: tuple[str, str] | None) -> dict:
    """The reference notebook's setup and solution cells (not the training run), with `answer` in place of its cell."""
    from autograde.course import source_notebook
    from autograde.reference import load_reference, solution_code
    from tests.support.synthetic import mutant_code

    namespace = load_reference(ASSIGNMENT, skip=("training_run",))
    if answer:
        cell, text = answer
        reference = next(solution_code(c.source) for c in source_notebook(ASSIGNMENT).cells
                         if c.metadata.get("nbgrader", {}).get("grade_id") == cell)
        exec(mutant_code(text, reference), namespace)
    return namespace


def run(task: tuple[str, str, int]) -> tuple[str, str, int, float, float, float]:
    """Train answer `name` of `kind` with `seed`; return (kind, name, seed, accuracy, alignment, seconds)."""
    import torch

    torch.set_num_threads(1)
    kind, name, seed = task
    namespace = load_notebook(None if kind == "reference" else answers(kind)[name])
    start = time.perf_counter()
    try:
        model, _ = namespace["train_reversal"](namespace["build_model"], seed=seed)
        accuracy, alignment, _ = namespace["evaluate_reversal"](model)
    except Exception:  # a wrong answer may not even train: it scores nothing
        accuracy = alignment = 0.0
    return kind, name, seed, accuracy, alignment, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="seeds 0 .. N-1 for each correct answer")
    parser.add_argument("--jobs", type=int, default=2, help="training runs in parallel")
    parser.add_argument("--wrong", action="store_true", help="also train the wrong answers (mutants), 3 seeds each")
    args = parser.parse_args()
    tasks = [("reference", "reference", seed) for seed in range(args.seeds)]
    tasks += [("alternatives", name, seed) for name in answers("alternatives") for seed in range(args.seeds)]
    if args.wrong:
        tasks += [("mutants", name, seed) for name in answers("mutants") for seed in range(3)]
    results: dict[tuple[str, str], list] = {}
    with ProcessPoolExecutor(args.jobs) as pool:
        for kind, name, seed, accuracy, alignment, seconds in pool.map(run, tasks):
            results.setdefault((kind, name), []).append((accuracy, alignment, seconds))
            print(f"{kind:12s} {name:45s} seed {seed:2d}: accuracy {accuracy:.3f}, alignment {alignment:.3f}, "
                  f"{seconds:.1f} s", flush=True)
    print(f"\n{'':12s} {'answer':45s} {'accuracy min / median':>22s} {'alignment min / median':>23s} {'time median':>12s}")
    for (kind, name), rows in results.items():
        accuracy, alignment, seconds = ([r[i] for r in rows] for i in range(3))
        print(f"{kind:12s} {name:45s} {min(accuracy):10.3f} / {statistics.median(accuracy):.3f} "
              f"{min(alignment):11.3f} / {statistics.median(alignment):.3f} {statistics.median(seconds):10.1f} s")
    # A wrong AdditiveAttention may still train well: its own cells catch it, and the training tests then retrain
    # with a correct module. The wrong wirings of decoder_attention are what the training thresholds must reject.
    groups = (("correct answers", lambda kind, name: kind in ("reference", "alternatives"), min),
              ("wrong decoder_attention wirings", lambda kind, name: kind == "mutants" and name.startswith("decoder"), max))
    for label, chosen, pick in groups:
        rows = [r for (kind, name), rs in results.items() if chosen(kind, name) for r in rs]
        if rows:
            print(f"{label}, over {len(rows)} runs: accuracy {pick.__name__} {pick(r[0] for r in rows):.3f}, "
                  f"alignment {pick.__name__} {pick(r[1] for r in rows):.3f}")


if __name__ == "__main__":
    main()
