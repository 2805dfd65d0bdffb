"""The kernel manager grading uses: each kernel in its own scratch folder, under limits, in the sandbox.

nbgrader_config.py names it (``c.SandboxKernelManager.*``) and
:class:`autograde.run.execute.GuardedExecute` starts every kernel with it. The
launcher it puts in front of the kernel command is :mod:`autograde.run.sandbox`.
"""
from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path

import psutil
from jupyter_client.manager import AsyncKernelManager
from traitlets import Bool, Enum, Integer, Unicode

from . import cgroups, clock, sandbox

log = logging.getLogger(__name__)
_said = {"no cgroup": False, "no cpu cgroup": False}  # what this process has logged once


class SandboxKernelManager(AsyncKernelManager):
    """Starts each kernel through :mod:`autograde.run.sandbox`: its own scratch folder, limits, and bubblewrap.

    The connection file and the kernel's log live in a fresh folder per
    kernel, removed when the kernel is cleaned up. In the sandbox, the kernel's
    Unix sockets (IPC transport: the sandbox has no network) lie in its own
    size-limited /tmp, reached through ``/proc/<pid>/root`` of the sandbox.
    """

    sandbox = Bool(True, help="run kernels in a sandbox (else only the memory and file-size limits apply)"
                   ).tag(config=True)
    sandbox_mode = Enum(["bubblewrap", "user"], default_value="bubblewrap",
                        help="the sandbox: bubblewrap (its own file system, network, processes), or, where bubblewrap "
                             "cannot run (Docker's default seccomp profile, as on Gradescope), an unprivileged user "
                             "of its own per kernel (the grader must be root, and its files closed to other users)"
                        ).tag(config=True)
    memory_mib = Integer(4096, min=256, help="memory of a kernel in MiB: the address space of each of its processes and, "
                                    "where a cgroup can be made, the memory of all its processes together"
                         ).tag(config=True)
    file_size_mib = Integer(512, min=1, help="largest file a kernel may write, in MiB").tag(config=True)
    max_processes = Integer(128, min=0, help="processes (and threads) a kernel may start beyond its NumPy and PyTorch "
                                      "thread pools; 0 for no limit (sandbox only)").tag(config=True)
    disk_mib = Integer(512, min=0, help="size in MiB of the sandbox's /tmp, which holds the kernel's home and working "
                                 "folder and is the only place it may write; 0 for no limit (sandbox only)"
                       ).tag(config=True)
    threads = Integer(1, min=1, help="threads a kernel's NumPy and PyTorch may use").tag(config=True)
    # Where a kernel's folder lies changes no grade: `grades=False` keeps it out of the cache key.
    scratch_base = Unicode("", help="folder for the kernels' scratch folders (ag-<worker pid>-*: connection file, "
                                    "kernel log) and, on Dask workers where it exists, the workers' courses (default: "
                                    "the system's temp folder); each is removed when its kernel ends. Keep its path "
                                    "short: Unix socket paths are limited to 107 bytes").tag(config=True, grades=False)
    last_words = Unicode("", help="the last lines the kernel wrote to its log, kept when it is cleaned up")
    log_text = Unicode("", help="the end of the kernel's log (at most KEPT_LOG_CHARS), kept when it is cleaned up")

    @property
    def bubblewrapped(self) -> bool:
        """Whether the kernel runs in bubblewrap's namespaces (its sockets under /proc/<pid>/root)."""
        return self.sandbox and self.sandbox_mode == "bubblewrap"

    def kernel_pid(self) -> int | None:
        """The pid (as this machine sees it) of the kernel's own process, inside the sandbox; None if not found.

        The shallowest process under the launcher that runs ``python -m
        ipykernel_launcher`` (bubblewrap's command lines name it too, but not
        as their arguments 1 and 2; a child the kernel forks is deeper).
        """
        if getattr(self, "_kernel_pid", None) is not None:
            return self._kernel_pid
        process = getattr(getattr(self, "provisioner", None), "process", None)
        if process is None:
            return None
        try:
            level = [psutil.Process(process.pid)]
        except psutil.Error:
            return None
        while level:
            below = []
            for candidate in level:
                try:
                    if candidate.cmdline()[1:3] == ["-m", "ipykernel_launcher"]:
                        self._kernel_pid = candidate.pid
                        return candidate.pid
                    below += candidate.children()
                except psutil.Error:  # (ended meanwhile)
                    pass
            level = below
        return None

    def cpu_seconds(self) -> float | None:
        """CPU seconds the kernel's processes have used, read from its memory cgroup (every process of the
        sandbox's, wherever it was started); None where the kernel has no cgroup."""
        folder = getattr(self, "_cgroup", None)
        return clock.cgroup_cpu_seconds(folder) if folder else None

    async def _async_pre_start_kernel(self, **kw):
        self._kernel_pid = None  # (a new kernel's is found when first asked for)
        # The worker's pid in the name: when a worker is lost, the grader removes its kernels' folders.
        base = os.path.abspath(self.scratch_base) if self.scratch_base else None
        if base is not None:
            os.makedirs(base, exist_ok=True)
        self._scratch = tempfile.mkdtemp(prefix=f"ag-{os.getpid()}-", dir=base)
        # A cgroup of the same name holds the kernel's processes to memory_mib together: forked children each
        # under the address-space limit must not add up past it. (A restart's kernel gets a fresh one.)
        self._remove_cgroup()
        self._cgroup, problem = cgroups.make_memory_cgroup(os.path.basename(self._scratch), self.memory_mib * 2**20)
        if problem is not None and not _said["no cgroup"]:
            _said["no cgroup"] = True
            log.warning("no memory cgroup for the kernels (%s): each of a kernel's processes is limited to %d MiB of "
                        "address space, but not all of them together", problem, self.memory_mib)
        # One CPU budget for all the kernel's threads and children (cgroup v2: on the same cgroup; v1: its own).
        self._cpu_cgroup, problem = cgroups.make_cpu_cgroup(os.path.basename(self._scratch), self.threads)
        if problem is None and self._cpu_cgroup is None and self._cgroup is not None:
            problem = cgroups.limit_cpu_v2(self._cgroup, self.threads)
        if problem is not None and not _said["no cpu cgroup"]:
            _said["no cpu cgroup"] = True
            log.warning("no CPU limit for the kernels (%s): the time limits charge the CPU of all a kernel's "
                        "processes, but busy children can slow other jobs' kernels", problem)
        self.transport = "ipc"
        self.connection_file = os.path.join(self._scratch, "kernel.json")
        self.ip = sandbox.KERNEL_IPC if self.bubblewrapped else os.path.join(self._scratch, "ipc")
        return await super()._async_pre_start_kernel(**kw)

    def format_kernel_cmd(self, extra_arguments=None):
        command = super().format_kernel_cmd(extra_arguments)
        if any("ipykernel" in part for part in command):
            # What the process writes to its stderr file descriptor (a crash's last words: the fault handler,
            # C libraries) must reach kernel.log at once; ipykernel's forwarding thread dies with the kernel.
            command.append("--IPKernelApp.capture_fd_output=False")
        launcher = [sys.executable, str(sandbox.LAUNCHER), "--memory", str(self.memory_mib),
                    "--file-size", str(self.file_size_mib), "--threads", str(self.threads),
                    "--processes", str(self.max_processes), "--disk", str(self.disk_mib)]
        for folder in (getattr(self, "_cgroup", None), getattr(self, "_cpu_cgroup", None)):
            if folder:
                launcher += ["--cgroup", folder]
        mode = [] if self.bubblewrapped else ["--user"] if self.sandbox else ["--no-sandbox"]
        return launcher + mode + ["--"] + command

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        await super()._async_launch_kernel(kernel_cmd, **kw)
        process = getattr(self.provisioner, "process", None)
        # A kernel run as a user of its own: that user is the launcher's pid's (the launcher becomes the kernel).
        self._user = sandbox.SANDBOX_UID_BASE + process.pid if self.sandbox and not self.bubblewrapped and process \
            else None
        if self.bubblewrapped:  # the client connects to the sockets inside the sandbox, before the control socket opens
            pid = await self._sandbox_pid()
            if pid is not None:
                self.ip = f"/proc/{pid}/root{sandbox.KERNEL_IPC}"

    async def _sandbox_pid(self, timeout: float = 30.0) -> int | None:
        """The sandbox's first process, as bubblewrap reports it; None if bubblewrap exits (or stalls) first."""
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            pid = sandbox.sandbox_pid(self._scratch)
            if pid is not None or await self.provisioner.poll() is not None:
                return pid
            await asyncio.sleep(0.002)
        return None

    def cleanup_ipc_files(self) -> None:
        """Remove the kernel's socket files; in the sandbox there is nothing to do, they vanish with its /tmp.

        (Removing them through /proc/<pid>/root could hit another sandbox: by now that pid may be another's.)
        """
        if not self.bubblewrapped:
            super().cleanup_ipc_files()

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart)
        if not restart and getattr(self, "_scratch", None):
            self.last_words = log_tail(Path(self._scratch) / "kernel.log")
            self.log_text = log_end(Path(self._scratch) / "kernel.log")
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None  # nbclient cleans up twice (in shutdown_kernel and after it): keep what was read
        if not restart:
            self._remove_cgroup()
            if getattr(self, "_user", None) is not None:  # (no PID namespace: its user's strays go by name)
                sandbox.kill_user_processes(self._user)

    def _remove_cgroup(self) -> None:
        if getattr(self, "_cgroup", None):
            cgroups.remove_cgroup(self._cgroup)
            self._cgroup = None
        if getattr(self, "_cpu_cgroup", None):
            cgroups.remove_cgroup(self._cpu_cgroup)
            self._cpu_cgroup = None

    # The base class binds this name to its own method, which nbclient calls after a kernel died.
    cleanup_resources = _async_cleanup_resources


KEPT_LOG_CHARS = 64 * 1024  # of a kernel's log, kept beside its executed notebook (student code can write gigabytes)


def log_end(path: Path, chars: int = KEPT_LOG_CHARS) -> str:
    """The last `chars` characters of the log at `path` ('' if it cannot be read), marked if cut."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            f.seek(max(0, size - chars))
            text = f.read(chars).decode("utf-8", errors="replace")
    except OSError:
        return ""
    return (f"[the first {size - chars} bytes of this log were cut by the grader]\n" if size > chars else "") + text


def log_tail(path: Path, lines: int = 8, chars: int = 1000) -> str:
    """A dead kernel's last words in its log: at most `lines` lines and `chars` characters, '' if none.

    Where Python's fault handler reported a crash, its report from the top
    (the error, then the innermost frames); else the log's last lines.
    ipykernel's start-up banner is left out.
    """
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - 16 * chars))
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    found = text.splitlines()
    # The banner ends with how to connect ("--existing <file>"); what matters comes after it.
    start = max((i + 1 for i, line in enumerate(found) if line.strip().startswith("--existing ")), default=0)
    crash = max((i for i, line in enumerate(found) if line.startswith("Fatal Python error")), default=None)
    if crash is not None:  # the error, then the thread that crashed, innermost frame first
        current = next((i for i in range(crash, len(found)) if found[i].startswith("Current thread")), crash + 1)
        kept = [found[crash]] + [line.rstrip() for line in found[current:] if line.strip()][:lines - 1]
    else:
        kept = [line.rstrip() for line in found[start:] if line.strip()][-lines:]
    return "\n".join(kept)[:chars]


def remove_scratch_of(pid: int, scratch_base: str | None = None, cgroup_parent: str | None = None,
                      cpu_parent: str | None = None) -> None:
    """Remove the scratch folders (and cgroups) of the kernels a (lost) worker process `pid` started.

    A signal handler passes `scratch_base` and `cgroup_parent`, found before it
    was installed: ``tempfile.gettempdir()`` takes a lock that the interrupted
    code may hold, and the handler would wait for it forever.
    """
    for folder in Path(scratch_base or tempfile.gettempdir()).glob(f"ag-{pid}-*"):
        shutil.rmtree(folder, ignore_errors=True)
    cgroups.remove_cgroups_of(f"ag-{pid}-", cgroup_parent, cpu_parent)
