"""Run the grading of many submissions on a ``concurrent.futures.Executor``, surviving lost worker processes.

Three executors stand behind the one interface: a ``ThreadPoolExecutor`` of
one thread (one submission at a time, in this process: ``--jobs 1``), a
``ProcessPoolExecutor`` (one worker process per core) and a Dask cluster's
(``Client.get_executor()``, ``--scheduler``). :func:`run_all` submits the tasks and hands each finished
future on.

A worker process that dies (killed, out of memory) breaks a
``ProcessPoolExecutor``: every task not done yet fails with
``BrokenProcessPool``, and the pool terminates its other workers. Then a fresh
executor takes over. The task whose worker was lost (as the workers record: a
terminated worker clears its record) is tried once more and then reported as
lost; the other tasks, running or waiting, run again at no cost. (Dask
replaces lost workers itself; its futures then fail with ``KilledWorker``.)
"""
from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Hashable
from concurrent.futures import Executor, Future, as_completed
from concurrent.futures.process import BrokenProcessPool

log = logging.getLogger(__name__)


def run_all(function: Callable, tasks: dict[Hashable, tuple], new_executor: Callable[[], Executor],
            done: Callable[[Hashable, Future], None], lost: Callable[[Hashable], None],
            running: Callable[[], set] = set, retries: int = 1) -> None:
    """Run ``function(*tasks[key])`` for every key on executors that `new_executor()` makes; survive lost workers.

    `done(key, future)` gets each task that finished, well or with an
    exception. When a process pool breaks, `running()` names the keys whose
    workers were lost while running them (each worker records its task, and a
    worker the pool terminates clears its record); each of those is charged a
    loss, and `lost(key)` gets a task whose worker was lost `retries` + 1 times.
    The other tasks of the broken pool run again in a fresh one.
    """
    losses: Counter = Counter()
    pending = dict(tasks)
    unexplained = 0  # breaks no worker's record explains (a worker lost between tasks)
    while pending:
        broken = []
        with new_executor() as executor:
            futures = {executor.submit(function, *args): key for key, args in pending.items()}
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
        log.debug("%d submission(s) left to grade in a fresh pool: %s", len(pending), sorted(pending, key=str))
