"""The clock of a cell's time limit: wall-clock time, less the time the process running the cell waited for a CPU,
but never less than the CPU time the kernel's own processes used.

Kept apart from :mod:`autograde.run.execute` (which imports nbgrader) so that
the tests' in-process evaluator times its cells by the same rule.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable

import psutil


def run_queue_wait(pid: int) -> float | None:
    """Seconds the process `pid` (its main thread, which runs the cells) has spent ready to run but waiting for a
    CPU that other programs held, as Linux counts it (``/proc/<pid>/schedstat``); None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def tree_cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user and system) used so far by the process `pid`, all its threads and every process below it,
    the children they reaped included; None where `pid` cannot be read."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return None
    total = 0.0
    for process in processes:
        try:
            used = process.cpu_times()
        except psutil.Error:  # (gone since it was listed)
            continue
        total += used.user + used.system + used.children_user + used.children_system
    return total


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cgroup_cpu_seconds(folder: str) -> float | None:
    """CPU seconds (user and system) used so far by the processes of the cgroup `folder`; None where it cannot be
    read.

    cgroup v2 counts it itself (``cpu.stat``'s ``usage_usec``, exited
    processes included). Elsewhere (a v1 memory cgroup) it is summed over the
    members in ``cgroup.procs`` from their ``/proc/<pid>/stat``, with the
    children they reaped: a few files, where :func:`tree_cpu_seconds` reads
    every process on the machine to find the tree. Either way it counts a
    process that left the kernel's tree (a child whose parent ended is adopted
    by a process above the kernel), which no process in the sandbox can take
    out of the cgroup.
    """
    try:
        with open(os.path.join(folder, "cpu.stat")) as f:
            for line in f:
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(os.path.join(folder, "cgroup.procs")) as f:
            pids = f.read().split()
    except OSError:
        return None
    ticks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # (ended since it was listed; its parent's count has it once reaped)
            continue
        ticks += sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime (fields 14-17 of proc(5))
    return ticks / _TICKS


class CellClock:
    """The time a cell is charged: the wall-clock time since it started, less the time its kernel waited for a CPU.

    On a quiet machine that is the wall-clock time; on a busy one, the time
    the kernel spent in the run queue while other programs had the cores is
    not counted, so a correct answer does not run out of time because the
    machine is shared. Sleeping or waiting for anything else still counts.
    `limit` is the charged time allowed (None: no limit); `wall_deadline` (a
    ``time.monotonic()`` value, None: none) ends the cell whatever it was
    charged. `waited()` gives the kernel's run-queue time so far (None where
    it cannot be read: then the clock is the wall clock). `cpu()` gives the CPU
    seconds the kernel's processes have used (:func:`cgroup_cpu_seconds` or
    :func:`tree_cpu_seconds`; None: not counted): the cell is charged at least the CPU they used since it
    started, so a cell whose own threads or children keep the cores busy, and
    its main thread waiting, is not let run past its limit by that wait.
    """

    def __init__(self, limit: float | None, wall_deadline: float | None, waited: Callable[[], float | None],
                 now: Callable[[], float] = time.monotonic, cpu: Callable[[], float | None] | None = None):
        self.limit, self.wall_deadline, self._waited, self._now = limit, wall_deadline, waited, now
        self.started = now()
        self._waited_at_start = waited()
        self._last_waited = 0.0
        self._cpu = cpu
        self._cpu_at_start = cpu() if cpu is not None else None
        self._last_cpu = 0.0

    def waited(self) -> float:
        """Seconds the kernel waited for a CPU since the cell started (the last known value if it cannot be read)."""
        if self._waited_at_start is not None:
            now = self._waited()
            if now is not None:
                self._last_waited = max(self._last_waited, now - self._waited_at_start)
        return self._last_waited

    def cpu_used(self) -> float:
        """CPU seconds the kernel's processes used since the cell started (0 where not counted; never decreasing,
        though a process that ends unreaped takes its time with it)."""
        if self._cpu_at_start is not None:
            now = self._cpu()
            if now is not None:
                self._last_cpu = max(self._last_cpu, now - self._cpu_at_start)
        return self._last_cpu

    def charged(self) -> float:
        """Seconds charged to the cell so far: its wall-clock time less its wait for a CPU, or the CPU its kernel's
        processes used, whichever is more."""
        return max(self._now() - self.started - self.waited(), self.cpu_used())

    def past_wall_deadline(self) -> bool:
        """Whether the wall-clock deadline has passed."""
        return self.wall_deadline is not None and self._now() >= self.wall_deadline

    def expired(self) -> bool:
        """Whether the cell is out of time: its charged time reached the limit, or the wall-clock deadline passed."""
        return self.past_wall_deadline() or (self.limit is not None and self.charged() >= self.limit)

    def next_check(self) -> float | None:
        """Seconds to wait before the clock can have expired, at the soonest (None: it never expires).

        Charged time grows at most as fast as the wall clock, or, counted as CPU time, as fast as all the cores
        together: no earlier look is needed.
        """
        cores = (os.cpu_count() or 1) if self._cpu is not None else 1
        waits = ([(self.limit - self.charged()) / cores] if self.limit is not None else []) + (
            [self.wall_deadline - self._now()] if self.wall_deadline is not None else [])
        return max(min(waits), 0.01) if waits else None
