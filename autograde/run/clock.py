"""The clock of a cell's time limit: wall-clock time, less the time the process running the cell waited for a CPU.

Kept apart from :mod:`autograde.run.execute` (which imports nbgrader) so that
the tests' in-process evaluator times its cells by the same rule.
"""
from __future__ import annotations

import time
from collections.abc import Callable


def run_queue_wait(pid: int) -> float | None:
    """Seconds the process `pid` (its main thread, which runs the cells) has spent ready to run but waiting for a
    CPU that other programs held, as Linux counts it (``/proc/<pid>/schedstat``); None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


class CellClock:
    """The time a cell is charged: the wall-clock time since it started, less the time its kernel waited for a CPU.

    On a quiet machine that is the wall-clock time; on a busy one, the time
    the kernel spent in the run queue while other programs had the cores is
    not counted, so a correct answer does not run out of time because the
    machine is shared. Sleeping or waiting for anything else still counts.
    `limit` is the charged time allowed (None: no limit); `wall_deadline` (a
    ``time.monotonic()`` value, None: none) ends the cell whatever it was
    charged. `waited()` gives the kernel's run-queue time so far (None where
    it cannot be read: then the clock is the wall clock).
    """

    def __init__(self, limit: float | None, wall_deadline: float | None, waited: Callable[[], float | None],
                 now: Callable[[], float] = time.monotonic):
        self.limit, self.wall_deadline, self._waited, self._now = limit, wall_deadline, waited, now
        self.started = now()
        self._waited_at_start = waited()
        self._last_waited = 0.0

    def waited(self) -> float:
        """Seconds the kernel waited for a CPU since the cell started (the last known value if it cannot be read)."""
        if self._waited_at_start is not None:
            now = self._waited()
            if now is not None:
                self._last_waited = max(self._last_waited, now - self._waited_at_start)
        return self._last_waited

    def charged(self) -> float:
        """Seconds charged to the cell so far."""
        return self._now() - self.started - self.waited()

    def past_wall_deadline(self) -> bool:
        """Whether the wall-clock deadline has passed."""
        return self.wall_deadline is not None and self._now() >= self.wall_deadline

    def expired(self) -> bool:
        """Whether the cell is out of time: its charged time reached the limit, or the wall-clock deadline passed."""
        return self.past_wall_deadline() or (self.limit is not None and self.charged() >= self.limit)

    def next_check(self) -> float | None:
        """Seconds to wait before the clock can have expired, at the soonest (None: it never expires).

        Charged time grows at most as fast as the wall clock, so no earlier look is needed.
        """
        waits = ([self.limit - self.charged()] if self.limit is not None else []) + (
            [self.wall_deadline - self._now()] if self.wall_deadline is not None else [])
        return max(min(waits), 0.01) if waits else None
