"""Benchmark what the sandbox adds to every graded notebook: starting a kernel in it (not a test).

    .venv/bin/python -m benchmarks.kernel_start [--repeat 15] [--no-sandbox]

Starts a kernel the way grading does (:class:`autograde.run.kernel_manager.SandboxKernelManager`,
with nbgrader_config.py's limits), waits for its first reply, kills it, and
prints the best and the median of `--repeat` such starts.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from autograde.course import nbgrader_config
from autograde.run.kernel_manager import SandboxKernelManager

REPO = Path(__file__).resolve().parent.parent


async def start_seconds(sandbox: bool) -> float:
    """Seconds from starting one kernel to its first reply."""
    config = nbgrader_config(REPO, kernel={"sandbox": sandbox})
    manager = SandboxKernelManager(kernel_name="python3", config=config)
    start = time.perf_counter()
    await manager.start_kernel()
    client = manager.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=120)
        return time.perf_counter() - start
    finally:
        client.stop_channels()
        await manager.shutdown_kernel(now=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--no-sandbox", action="store_true", help="start the kernels with only the limits")
    args = parser.parse_args()
    times = [asyncio.run(start_seconds(not args.no_sandbox)) for _ in range(args.repeat)]
    print(f"kernel start to first reply{'' if not args.no_sandbox else ' (no sandbox)'}: best {min(times):.3f} s, "
          f"median {statistics.median(times):.3f} s, over {args.repeat} starts")


if __name__ == "__main__":
    main()
