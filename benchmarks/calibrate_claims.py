"""Check the book's claims under what another machine would change: seeds, threads and CPU kernels.

    .venv/bin/python -m benchmarks.calibrate_claims 05-transformer [--runs base,seed1,...] [--jobs 2]
    .venv/bin/python -m benchmarks.calibrate_claims 05-transformer --check-only   # re-check kept runs

A claim in the prose must hold wherever the book is built. Training a small model
lands elsewhere on another CPU (its kernels sum in another order), so a claim
that held with one seed on one machine may not hold on the next. This script
executes a chapter's page (`book/<a>.md`, as the book build does, in `book/`)
once per *run*, each run changing one thing a machine or a reader changes:

- ``base``: the page as written;
- ``seed<k>``: every seed the page sets (``torch.manual_seed``, ``torch.Generator().manual_seed``,
  ``np.random.default_rng``, ``np.random.seed``, ``random.seed``) shifted by ``1000 * k``, so every model,
  batch and test set is drawn anew;
- ``threads2``: two threads even where the page asks for one (``torch.set_num_threads`` pinned to 2);
- ``isa-default`` / ``isa-avx2``: PyTorch's own kernels limited to their scalar or AVX2 versions
  (``ATEN_CPU_CAPABILITY``) and oneDNN and MKL to AVX2 (``DNNL_MAX_CPU_ISA``, ``MKL_ENABLE_INSTRUCTIONS``),
  as on a CPU without AVX-512.

Each run's glued values are kept in ``_build/claims-calibration/<a>/<run>.pickle``. Then every claims test of
that chapter in ``tests/course/test_book.py`` or ``tests/course/test_book_<NN>.py`` (``test_ch<N>_*``) is called against each run's values, and the
table of passes and failures is printed: a claim is robust when its test passes in every run.
"""
from __future__ import annotations

import argparse
import inspect
import os
import pickle
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KEPT = REPO / "_build" / "claims-calibration"

SEED_SHIFT = '''
import random as _random
import numpy as _np
import torch as _torch

_SHIFT = {shift}
_manual_seed, _generator, _default_rng, _np_seed, _random_seed = (
    _torch.manual_seed, _torch.Generator, _np.random.default_rng, _np.random.seed, _random.seed)


class _ShiftedGenerator(_generator):
    def manual_seed(self, seed):
        return super().manual_seed(int(seed) + _SHIFT)


_torch.manual_seed = lambda seed: _manual_seed(int(seed) + _SHIFT)
_torch.Generator = _ShiftedGenerator
def _shifted(seed):
    """An integer seed shifted; anything else (None, a Generator a library passes on) as it is."""
    return int(seed) + _SHIFT if isinstance(seed, (int, _np.integer)) else seed


_np.random.default_rng = lambda seed=None: _default_rng(_shifted(seed))
_np.random.seed = lambda seed=None: _np_seed(_shifted(seed))
_random.seed = lambda seed=None, *args, **kwargs: _random_seed(_shifted(seed), *args, **kwargs)
'''

TWO_THREADS = '''
import torch as _torch
_torch.set_num_threads(2)
_torch.set_num_threads = lambda n: None
'''

ISA_ENV = {"DNNL_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}


def run_setup(run: str) -> tuple[str, dict[str, str]]:
    """(code executed before the page, extra environment of the kernel) for one run's name."""
    if run == "base":
        return "", {}
    if run.startswith("seed"):
        return SEED_SHIFT.format(shift=1000 * int(run[4:])), {}
    if run == "threads2":
        return TWO_THREADS, {}
    if run.startswith("isa-"):
        return "", {"ATEN_CPU_CAPABILITY": run[4:], **ISA_ENV}
    raise ValueError(f"unknown run {run!r}: base, seed<k>, threads2, isa-default or isa-avx2")


def glued_values(notebook) -> dict:
    """{name: value} of what an executed notebook glued (the same reading as tests/support/claims.glued)."""
    from tests.support.claims import glued_from
    return glued_from(notebook)


def execute(assignment: str, run: str, timeout: int = 1200) -> tuple[str, float]:
    """Execute book/<assignment>.md under `run`; keep its glued values and printed text; (run, seconds)."""
    import jupytext
    import nbformat
    from nbclient import NotebookClient

    setup, env = run_setup(run)
    notebook = jupytext.read(REPO / "book" / f"{assignment}.md")
    if setup:
        notebook.cells.insert(0, nbformat.v4.new_code_cell(setup))
    os.environ.update(env)  # the kernel inherits this process's environment (one run per process)
    start = time.perf_counter()
    NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(REPO / "book")}}).execute()
    seconds = time.perf_counter() - start
    printed = "".join(output.get("text", "") for cell in notebook.cells for output in cell.get("outputs", [])
                      if output.get("output_type") == "stream" and output.get("name") == "stdout")
    keep(assignment, run, glued_values(notebook), printed)
    return run, seconds


def keep(assignment: str, run: str, glued: dict, printed: str) -> None:
    """Keep one run's glued values (pickled: dict keys stay numbers) and printed text."""
    folder = KEPT / assignment
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{run}.pickle").write_bytes(pickle.dumps({"glued": glued, "printed": printed}))


def keep_build(assignment: str) -> None:
    """Keep the values of the last book build (`make book`) as the run ``built``."""
    from tests.support.claims import glued, printed
    keep(assignment, "built", glued(assignment), printed(assignment))


def check(assignment: str, runs: list[str]) -> dict[str, dict[str, str]]:
    """{test name: {run: "ok" or the failure's first line}} for the chapter's claims tests (tests/course/test_book*.py)."""
    import importlib

    number = int(assignment[:2])
    # A chapter's claims tests are in tests/course/test_book.py or in its own file, tests/course/test_book_<NN>.py.
    modules = [importlib.import_module(f"tests.course.{stem}") for stem in ("test_book", f"test_book_{number:02d}")
               if (REPO / "tests" / "course" / f"{stem}.py").is_file()]
    tests = {name: (module, test) for module in modules for name, test in vars(module).items()
             if name.startswith(f"test_ch{number}_") and callable(test)}
    table: dict[str, dict[str, str]] = {name: {} for name in tests}
    for run in runs:
        kept = pickle.loads((KEPT / assignment / f"{run}.pickle").read_bytes())
        for module in modules:
            module.glued = lambda _assignment, values=kept["glued"]: values
            module.printed = lambda _assignment, text=kept["printed"]: text
        for name, (_, test) in tests.items():
            try:
                test(*[None] * len(inspect.signature(test).parameters))  # (the `book` fixture: not needed)
                table[name][run] = "ok"
            except Exception as error:  # noqa: BLE001 (a failing claim, whatever it raised, is a result here)
                table[name][run] = (str(error).splitlines() or [type(error).__name__])[0][:160]
                if not isinstance(error, AssertionError):
                    table[name][run] = "ERROR " + "".join(traceback.format_exception_only(error)).strip()[:160]
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("assignment", help="the chapter, e.g. 05-transformer")
    parser.add_argument("--runs", default="base,seed1,seed2,threads2,isa-avx2",
                        help="comma-separated runs: base, seed<k>, threads2, isa-default, isa-avx2")
    parser.add_argument("--jobs", type=int, default=2, help="pages executed at once (default 2)")
    parser.add_argument("--check-only", action="store_true", help="only check the runs kept before")
    parser.add_argument("--timeout", type=int, default=1200,
                        help="seconds a cell may take (default 1200; threads2 on a loaded machine may need more)")
    parser.add_argument("--built", action="store_true",
                        help="also check the last book build's values (run `built`; build the book first)")
    args = parser.parse_args()
    runs = args.runs.split(",")
    for run in runs:
        if run != "built":
            run_setup(run)  # refuse an unknown run before executing anything
    if args.built:
        keep_build(args.assignment)
        runs.append("built")
    if not args.check_only:
        with ProcessPoolExecutor(args.jobs, max_tasks_per_child=1) as pool:  # (a run's environment dies with it)
            fresh = [run for run in runs if run != "built"]
            for run, seconds in pool.map(execute, [args.assignment] * len(fresh), fresh, [args.timeout] * len(fresh)):
                print(f"{args.assignment} {run}: executed in {seconds:.0f} s", flush=True)
    table = check(args.assignment, runs)
    failing = 0
    for name, results in table.items():
        bad = {run: result for run, result in results.items() if result != "ok"}
        failing += bool(bad)
        print(f"{'FAIL' if bad else 'ok  '} {name}")
        for run, result in bad.items():
            print(f"       {run}: {result}")
    print(f"{len(table) - failing} of {len(table)} claims tests hold in every run ({', '.join(runs)})")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())  # (run as `python -m benchmarks.calibrate_claims` from the repository: its root is on sys.path)
