"""A process pool that survives losing a worker process: each lost task costs one retry, not the whole batch.

A worker process that dies (killed, out of memory) breaks a
``ProcessPoolExecutor``: every task not done yet fails with
``BrokenProcessPool``, and the pool terminates its other workers. Here a fresh
pool takes over. The task whose worker was lost (as the workers record: a
terminated worker clears its record) is tried once more and then reported as
lost; the other tasks, running or waiting, run again at no cost.
"""
from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

log = logging.getLogger(__name__)


def run_surviving_losses(function: Callable, tasks: dict[Hashable, tuple], workers: int, context, initializer: Callable,
                         initargs: tuple, running: Callable[[], set], done: Callable[[Hashable, Future], None],
                         lost: Callable[[Hashable], None], retries: int = 1) -> None:
    """Run ``function(*tasks[key])`` for every key in pools of `workers` processes, surviving lost workers.

    `running()`, called after a pool broke, names the keys whose workers were
    lost while running them (each worker records its task, and a worker the
    pool terminates clears its record). `done(key, future)` gets each task
    that finished, well or with an exception; `lost(key)` each task whose
    worker was lost `retries` + 1 times.
    """
    losses: Counter = Counter()
    pending = dict(tasks)
    unexplained = 0  # breaks no worker's record explains (a worker lost between tasks)
    while pending:
        broken = []
        with ProcessPoolExecutor(workers, mp_context=context, initializer=initializer, initargs=initargs) as pool:
            futures = {pool.submit(function, *args): key for key, args in pending.items()}
            for future in as_completed(futures):
                key = futures[future]
                if isinstance(future.exception(), BrokenProcessPool):
                    broken.append(key)
                else:
                    done(key, future)
        pending = {key: tasks[key] for key in broken}
        if not broken:
            return
        charged = running() & set(broken)
        if not charged:
            unexplained += 1
            # A pool that keeps breaking with no task to blame would never finish: then every task left is lost.
            charged = set(broken) if unexplained > retries + 1 else set()
            log.warning("lost a grading worker process between submissions: grading the rest in a fresh one")
        for key in sorted(charged, key=str):
            losses[key] += 1
            if losses[key] > retries:
                log.warning("lost a grading worker process again while it graded %s: reported, not retried", key)
                lost(key)
                del pending[key]
            else:
                log.warning("lost a grading worker process (killed, or out of memory) while it graded %s: "
                            "grading it again in a fresh one", key)
