"""The time limits of the execute step: a cell's, counted without the time its kernel waited for a CPU, capped by
the wall clock, and the whole notebook's.

:class:`TimeLimits` is a part of :class:`autograde.run.execute.GuardedExecute`
(it reads that class's settings: ``timeout``, ``notebook_timeout``,
``agent_start_timeout``, ``timeout_wall_factor``). nbclient times a cell by
the wall clock alone and calls no hook while it waits for the reply; here its
own wait runs with no limit, beside a watchdog that reads a
:class:`autograde.run.clock.CellClock`. Where the clock runs out, the kernel
is interrupted by nbclient's timeout handler, the event ``timed_out``
recorded and the student told which limit stopped the cell; a kernel that
does not answer the interrupt within ``iopub_timeout`` is stuck
(:class:`autograde.run.records.KernelStuck`).
"""
from __future__ import annotations

import asyncio
import time

from jupyter_core.utils import run_sync

from .clock import CellClock, run_queue_wait, tree_cpu_seconds
from .records import Event, KernelStuck, error_output, record


class TimeLimits:
    """The cells' and the notebook's time limits, as :class:`autograde.run.execute.GuardedExecute` keeps them."""

    def _past_notebook_timeout(self, cell) -> bool:
        """Whether the notebook's time is up; if so, `cell` is not run and counts as timed out (if it is code)."""
        if self._deadline is None or time.monotonic() < self._deadline:
            return False
        if cell.cell_type == "code":
            cell.outputs = [error_output("TimeoutError", f"the notebook's time limit ({self.notebook_timeout} s) ran "
                                                         "out before this cell ran")]
            record(cell, Event.TIMED_OUT, notebook_timeout=self.notebook_timeout)
        return True

    def _get_timeout(self, cell):
        # nbclient's own waits get no limit: the watchdog (_watch) stops a cell, or the grader's own request, when its
        # CellClock runs out. (The cell's own limit is nbclient's, read in _clock.)
        return None

    def _clock(self, cell) -> CellClock:
        """A clock for the request about to be sent to the kernel (a cell, or the grader's own if `cell` is None)."""
        # The grader's own requests (no cell: the kernel's info, the agent's start) have their own limit and never
        # the notebook's deadline: past it, they are answered and the cells are marked as not run at the notebook's
        # limit, a timeout of the student's. (CI: a kernel_info asked past the deadline on a busy machine was given
        # 10 ms, timed out, and nbconvert's `assert info_msg` failed the whole notebook.)
        limit = self.agent_start_timeout if cell is None else super()._get_timeout(cell)  # (not the notebook's)
        deadlines = [time.monotonic() + self.timeout_wall_factor * limit] if limit and self.timeout_wall_factor else []
        if getattr(self, "_deadline", None) is not None and cell is not None:
            deadlines.append(self._deadline)
        pid = self.km.kernel_pid() if self.km is not None and hasattr(self.km, "kernel_pid") else None
        if not pid:
            return CellClock(limit, min(deadlines, default=None), lambda: None)
        # The kernel's NumPy and PyTorch may use `threads` cores at once: only CPU beyond that pace is charged, so
        # an honest answer that uses the threads the grader granted is charged no more than its wall-clock time.
        threads = max(int(getattr(self.km, "threads", 1) or 1), 1)
        checker = getattr(self, "_checker", None) if getattr(self, "_plan", None) is not None else None

        def waited():
            # A test cell runs in the checker, the kernel answering it: a CPU that other programs held is forgiven
            # to both (they take turns, never run at once).
            kernel = run_queue_wait(pid)
            other = run_queue_wait(checker.pid) if checker is not None and checker.pid else 0.0
            return None if kernel is None else kernel + (other or 0.0)

        # The kernel's cgroup lists its processes at the cost of a few files; without one, the tree below its pid.
        of_cgroup = getattr(self.km, "cpu_seconds", None)
        counted = of_cgroup if of_cgroup is not None and of_cgroup() is not None else lambda: tree_cpu_seconds(pid)
        return CellClock(limit, min(deadlines, default=None), waited,
                         cpu=lambda: (lambda used: None if used is None else used / threads)(counted()))

    async def _watch(self, waiting: asyncio.Future, clock: CellClock, cell, grace: float | None,
                     replied=lambda: False, on_expiry=lambda: None):
        """Wait for `waiting` (nbclient's own wait for a reply, given no time limit) while watching `clock`; whether
        the clock ran out first, and the reply nbclient's timeout handler made then.

        When the clock runs out before the reply was read (`replied()`: the
        wait for the kernel to go idle after it is nbclient's own, with its
        own limit), `on_expiry()` runs, the kernel is interrupted by nbclient's
        timeout handler and `waiting` is given `grace` more seconds to end
        (None: it is cancelled at once). Raises :class:`KernelStuck` if it did
        not end within the grace.
        """
        try:
            while not waiting.done():
                if clock.expired() and not replied():
                    on_expiry()
                    self._stopped_by = clock
                    stopped = await self._async_handle_timeout(clock.limit or self.timeout, cell)
                    if grace is not None:
                        await asyncio.wait({waiting}, timeout=grace)
                        if not waiting.done():
                            raise KernelStuck()
                    return True, stopped
                await asyncio.wait({waiting}, timeout=None if replied() else clock.next_check())
            return False, None
        finally:
            if not waiting.done():  # (stopped, stuck, or this wait cancelled: a dead kernel)
                waiting.cancel()

    async def _async_poll_for_reply(self, msg_id, cell, timeout, task_poll_output_msg, task_poll_kernel_alive):
        # nbclient's own wait for the cell's reply, watched by its CellClock. Interrupted at its limit, the kernel
        # must answer and go idle within iopub_timeout, else it is stuck (stopped with its kernel). nbclient marks
        # the reply read in the cell's metadata (record_timing): a cell that answered in time is never stopped.
        waiting = asyncio.ensure_future(super()._async_poll_for_reply(
            msg_id, cell, None, task_poll_output_msg, task_poll_kernel_alive))
        expired, stopped = await self._watch(
            waiting, self._clock(cell), cell, grace=self.iopub_timeout,
            replied=lambda: "shell.execute_reply" in cell.get("metadata", {}).get("execution", {}),
            # (as nbclient does before it interrupts: a kernel that dies then is stuck, not killed by the student)
            on_expiry=task_poll_kernel_alive.cancel)
        reply = waiting.result()
        if expired and stopped is not None:  # the kernel's KeyboardInterrupt, told as the limit that stopped it
            reply["content"] = stopped["content"]
        return reply

    async def async_wait_for_reply(self, msg_id, cell=None):
        """nbclient's wait for a reply (the kernel's info, the agent's start), watched by a :class:`CellClock`:
        past the limit the kernel is interrupted and None returned."""
        waiting = asyncio.ensure_future(super().async_wait_for_reply(msg_id, cell))
        expired, _ = await self._watch(waiting, self._clock(cell), cell, grace=None)
        return None if expired else waiting.result()

    wait_for_reply = run_sync(async_wait_for_reply)

    async def _async_handle_timeout(self, timeout, cell=None):
        # Where nbclient gives up waiting for a cell and interrupts the kernel: the one place a timeout is known.
        if cell is not None:
            record(cell, Event.TIMED_OUT)
            self._stopped.add(id(cell))
        reply = await super()._async_handle_timeout(timeout, cell)
        clock = getattr(self, "_stopped_by", None)
        if reply is not None and clock is not None:  # what the student reads in the cell
            message = self._timeout_message(clock)
            reply["content"].update(evalue=message, traceback=[f"CellTimeoutError: {message}"])
        return reply

    def _timeout_message(self, clock: CellClock) -> str:
        """Why a cell was stopped, in the student's words."""
        notebook = getattr(self, "_deadline", None)
        if clock.limit is None or (notebook is not None and time.monotonic() >= notebook):
            return f"the notebook's time limit ({self.notebook_timeout} s) ran out while this cell ran; it was stopped"
        if clock.past_wall_deadline():
            return (f"the cell was stopped after {self.timeout_wall_factor * clock.limit:g} s by the clock "
                    f"({self.timeout_wall_factor} times its time limit of {clock.limit:g} s), most of it spent "
                    "waiting for a busy machine")
        return (f"the cell ran longer than its time limit of {clock.limit:g} s and was stopped (time spent waiting "
                "for a busy machine is not counted; the CPU its own threads and processes use is)")
