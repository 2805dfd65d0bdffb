"""The peak memory of a kernel's processes around a call, as the operating system counts it.

The checker measures a test's memory bound with it (``peak_memory_of``,
:mod:`autograde.run.checker`): nothing in the student's process can reset the
counts it reads.
"""
from __future__ import annotations

import os
from pathlib import Path


class MemoryProbe:
    """The peak memory of the kernel's processes while a block runs, above what they held when it began.

    It reads the kernel's memory cgroup (``memory.peak``, reset for this
    probe's own file descriptor: Linux 6.12 and later) where there is one, and
    else the kernel process's peak resident size (``VmHWM``, reset through
    ``clear_refs``), which misses what forked children use. Both are the
    operating system's counts: nothing in the student's process can change them.
    """

    def __init__(self, cgroup: str | None, pid: int | None):
        self.cgroup, self.pid = cgroup, pid
        self.how = ""
        self.growth = None

    def __enter__(self):
        self._file = None
        if self.cgroup and os.path.exists(os.path.join(self.cgroup, "memory.peak")):
            try:
                self._file = open(os.path.join(self.cgroup, "memory.peak"), "r+")
                self._file.write("reset\n")
                self._file.flush()
                self._file.seek(0)
                self._base = int(self._file.read())
                self.how = "the peak memory of the kernel's processes (its cgroup's memory.peak)"
                return self
            except (OSError, ValueError):
                if self._file is not None:
                    self._file.close()
                self._file = None
        if self.pid:
            Path(f"/proc/{self.pid}/clear_refs").write_text("5")
            self._base = self._hwm()
            self.how = "the peak resident memory of the kernel's process (VmHWM)"
        return self

    def _hwm(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        raise OSError("no VmHWM")

    def __exit__(self, *exc):
        if self._file is not None:
            self._file.seek(0)
            self.growth = int(self._file.read()) - self._base
            self._file.close()
        elif self.pid:
            self.growth = self._hwm() - self._base
        return False
