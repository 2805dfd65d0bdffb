"""The grader's side of the checker (:mod:`autograde.run.checker`): one process per grading worker, started when first
used and kept warm, to which the execute step sends a notebook's given and test cells and whose replies it reads."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from multiprocessing.connection import Connection
from pathlib import Path


class CheckerFailed(RuntimeError):
    """The checker process did not answer (it died, or a test of the grader's own never ended)."""


class CheckerProcess:
    """The grader's handle on its checker process: one per worker process, started when first used."""

    def __init__(self, threads: int = 1):
        self.threads = threads
        self._proc = None
        self._conn = None
        self._pending = 0

    def _start(self) -> None:
        parent, child = socket.socketpair()
        # OpenMP's threads wait for work by spinning: while the checker waits for the kernel (a lent module's calls
        # go back and forth thousands of times in a training run) they would take the CPU the kernel needs.
        env = dict(os.environ, MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1", OMP_WAIT_POLICY="PASSIVE")
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[name] = str(self.threads)
        root = str(Path(__file__).resolve().parents[2])
        code = f"from autograde.run.checker import main; main({child.fileno()})"  # (-c: the package from cwd)
        self._proc = subprocess.Popen([sys.executable, "-c", code], pass_fds=[child.fileno()], env=env, cwd=root,
                                      stdin=subprocess.DEVNULL)
        child.close()
        self._conn = Connection(parent.detach())
        self._pending = 0

    def _send(self, *request) -> None:
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        while self._pending:  # a reply not waited for (its cell's kernel died): stop that test, drop its reply
            self._conn.send(("abort",))
            self._reply(timeout=30.0)
        self._conn.send(request)
        self._pending += 1

    def _reply(self, timeout: float | None) -> dict:
        try:
            ready = self._conn.poll(timeout)
            if not ready:
                raise CheckerFailed(f"the grader's checker did not answer within {timeout:g} s")
            reply = self._conn.recv()
        except (EOFError, OSError) as e:
            self.close()
            raise CheckerFailed(f"the grader's checker stopped ({e})") from None
        except CheckerFailed:
            self.close()
            raise
        self._pending -= 1
        return reply

    def call(self, *request, timeout: float | None = 300.0) -> dict:
        """Send `request` and wait for its reply."""
        self._send(*request)
        return self._reply(timeout)

    def begin(self, *request) -> None:
        """Send `request`; its reply is read by :meth:`finish` (or dropped before the next request)."""
        self._send(*request)

    def finish(self, grace: float = 2.0, timeout: float = 10.0) -> dict:
        """The reply to the test :meth:`begin` sent, once the kernel's cell has ended: if it does not come within
        `grace` seconds the checker still waits for the kernel, which will not answer any more (its agent was
        replaced, or the cell was stopped), and is told to stop waiting."""
        if self._conn is not None and not self._conn.poll(grace):
            self._conn.send(("abort",))
        return self._reply(timeout)

    @property
    def pid(self) -> int | None:
        """The checker process's pid, None before it started."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def close(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._proc.kill()
            self._proc.wait()
        self._proc = self._conn = None
        self._pending = 0


_process: dict[int, CheckerProcess] = {}


def checker_process(threads: int = 1) -> CheckerProcess:
    """This worker process's checker (one per process: a pool's workers each get their own)."""
    pid = os.getpid()
    if pid not in _process:
        _process.clear()  # (a forked child does not share its parent's)
        _process[pid] = CheckerProcess(threads)
    return _process[pid]
