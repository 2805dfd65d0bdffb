"""Benchmark: the reference streaming_attention (exercise 4) against torch's scaled_dot_product_attention.

    .venv/bin/python -m benchmarks.streaming_attention [--quick]

For m = 1024 queries, d = 64, float64, and growing numbers of keys n, each
method runs in a fresh process (so peak memories do not mix); the script
prints the best of 3 wall times, their ratio, and each method's peak memory
above the inputs (growth of the process's maximum resident set). It then runs
streaming attention at n = 1,000,000, where the full score matrix (7.6 GiB)
does not fit the stated budget of 2 GiB.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import time

M, D, CHUNK, BUDGET_GIB = 1024, 64, 4096, 2.0


def run(method: str, n: int, repeats: int, queue) -> None:
    """In a child process: make inputs, run `method` `repeats` times, report (best seconds, peak MiB)."""
    import numpy as np
    import torch

    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(M, D)), rng.normal(size=(n, D)), rng.normal(size=(n, D))
    if method == "torch":
        tq, tk, tv = (torch.from_numpy(a) for a in (Q, K, V))
        fn = lambda: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv)  # noqa: E731
    else:
        from autograde.reference import load_reference

        streaming = load_reference("04-long-sequences")["streaming_attention"]
        fn = lambda: streaming(Q, K, V, CHUNK)  # noqa: E731
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - baseline) / 1024  # ru_maxrss is in KiB
    queue.put((best, peak))


def measure(method: str, n: int, repeats: int) -> tuple[float, float]:
    """(best seconds, peak MiB) of `method` on n keys, measured in a fresh process."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    child = ctx.Process(target=run, args=(method, n, repeats, queue))
    child.start()
    result = queue.get()
    child.join()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes and no run at a million keys")
    args = parser.parse_args()
    import torch

    sizes = [16_384, 65_536] if args.quick else [16_384, 65_536, 262_144]
    print(f"m = {M} queries, d = {D}, float64, streaming chunks of {CHUNK} keys, torch {torch.__version__}, "
          f"{torch.get_num_threads()} torch threads")
    print(f"{'n':>9} {'streaming s':>12} {'torch s':>9} {'ratio':>6} {'streaming MiB':>14} {'torch MiB':>10} {'scores MiB':>11}")
    for n in sizes:
        s_time, s_peak = measure("streaming", n, 3)
        t_time, t_peak = measure("torch", n, 3)
        print(f"{n:>9} {s_time:>12.3f} {t_time:>9.3f} {s_time / t_time:>6.2f} {s_peak:>14.0f} {t_peak:>10.0f} "
              f"{M * n * 8 / 2**20:>11.0f}")
    if not args.quick:
        n = 1_000_000
        full_gib = M * n * 8 / 2**30
        s_time, s_peak = measure("streaming", n, 1)
        print(f"\nn = {n:,}: the full score matrix alone is {full_gib:.1f} GiB, over the {BUDGET_GIB:.0f} GiB budget.")
        print(f"streaming attention: {s_time:.1f} s, peak {s_peak:.0f} MiB above the inputs "
              f"({'within' if s_peak < BUDGET_GIB * 1024 else 'OVER'} the budget)")


if __name__ == "__main__":
    main()
