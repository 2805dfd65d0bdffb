"""The cgroups a kernel runs in: one whose memory limit holds for all of a kernel's processes together, one whose
CPU quota they share, made by the kernel manager before the kernel starts and emptied and removed after it ends.

cgroup v2 where its memory controller is on, else v1's hierarchies (hybrid set-ups, such as this container's, have
memory only there). The launcher (:mod:`autograde.run.sandbox`, a stdlib-only script) joins them; this module is
the grader's side, and imports only the standard library too (a worker's SIGTERM handler calls it).
"""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def _own_memory_cgroup() -> tuple[str, int] | tuple[None, str]:
    """This process's cgroup that governs memory, as (folder, cgroup version), or (None, why there is none).

    cgroup v2 where its memory controller is on, else v1's memory hierarchy
    (hybrid set-ups such as this container's have memory only there).
    """
    return _own_cgroup("memory")


def _own_cgroup(controller: str) -> tuple[str, int] | tuple[None, str]:
    """This process's cgroup that governs `controller` ("memory", "cpu"), as (folder, cgroup version), or (None,
    why there is none)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = [line.split(" - ") for line in Path("/proc/self/mountinfo").read_text().splitlines() if " - " in line]
    except OSError as e:
        return None, f"cannot read this process's cgroups ({e})"
    v2, v1 = None, {}  # this process's cgroup v2, and its v1 cgroup of each controller
    for line in lines:
        number, controllers, path = line.split(":", 2)
        if number == "0" and not controllers:
            v2 = path
        else:
            v1.update((c, path) for c in controllers.split(","))
    for version in (2, 1):
        for before, after in mounts:
            fields, (fstype, _, options) = before.split(), after.split()[:3]
            root, point = fields[3], fields[4]
            if version == 2 and fstype == "cgroup2" and v2 is not None:
                path = v2
            elif version == 1 and fstype == "cgroup" and controller in options.split(",") and controller in v1:
                path = v1[controller]
            else:
                continue
            if root != "/" and not (path == root or path.startswith(root + "/")):
                continue  # (a cgroup namespace's view that does not hold this process's cgroup)
            relative = os.path.relpath(path, root)
            folder = point if relative == "." else os.path.join(point, relative)
            if version == 2 and controller not in Path(folder, "cgroup.controllers").read_text().split():
                continue
            return os.path.normpath(folder), version
    return None, f"no cgroup with a {controller} controller is mounted for this process"


CPU_PERIOD_US = 100_000


def cpu_quota(threads: int) -> int:
    """The CPU time (µs per :data:`CPU_PERIOD_US`) a kernel's processes may use together: the cores its thread
    pools were granted, and a fifth of a core for the kernel's own messaging threads."""
    return int((max(threads, 1) + 0.2) * CPU_PERIOD_US)


def make_cpu_cgroup(name: str, threads: int) -> tuple[str | None, str | None]:
    """A new cgroup `name` below this process's in the CPU controller's hierarchy, whose processes together use
    at most :func:`cpu_quota` of the CPU (busy threads or children of a cell cannot take more, nor starve the
    kernels of other jobs). Returns (its folder, None), or (None, why none could be made). Where memory and CPU
    share one hierarchy (cgroup v2), the quota is set on the kernel's memory cgroup instead and this returns
    (None, None)."""
    parent, version = _own_cgroup("cpu")
    if parent is None:
        return None, version
    if version == 2:
        return None, None
    folder = os.path.join(parent, name)
    try:
        os.mkdir(folder)
        Path(folder, "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
        Path(folder, "cpu.cfs_quota_us").write_text(str(cpu_quota(threads)))
    except OSError as e:
        remove_cgroup(folder)
        return None, f"cannot make a cpu cgroup in {parent} (cgroup v1): {e.strerror or e}"
    return folder, None


def limit_cpu_v2(folder: str, threads: int) -> str | None:
    """Set the CPU quota on the kernel's cgroup v2 `folder` (memory and CPU in one); None, or why it could not."""
    try:
        control = Path(os.path.dirname(folder), "cgroup.subtree_control")
        if "cpu" not in control.read_text().split():
            control.write_text("+cpu")
        Path(folder, "cpu.max").write_text(f"{cpu_quota(threads)} {CPU_PERIOD_US}")
    except OSError as e:
        return f"cannot set cpu.max on {folder}: {e.strerror or e}"
    return None


def make_memory_cgroup(name: str, limit_bytes: int) -> tuple[str | None, str | None]:
    """A new cgroup `name` below this process's, holding its members to `limit_bytes` of memory together.

    Returns (its folder, None), or (None, why none could be made: no memory
    controller, no right to make one, a cgroup v2 whose controllers cannot be
    passed down), in words for the log.
    """
    parent, version = _own_memory_cgroup()
    if parent is None:
        return None, version
    folder = os.path.join(parent, name)
    try:
        if version == 2:
            control = Path(parent, "cgroup.subtree_control")
            if "memory" not in control.read_text().split():
                # (Refused while the grader's own cgroup holds processes: cgroup v2 passes controllers down only
                # from cgroups without processes of their own. Run the grader in a delegated cgroup then.)
                control.write_text("+memory")
            os.mkdir(folder)
            Path(folder, "memory.max").write_text(str(limit_bytes))
            if os.path.exists(os.path.join(folder, "memory.swap.max")):
                Path(folder, "memory.swap.max").write_text("0")  # swap would be memory past the limit
        else:
            os.mkdir(folder)
            Path(folder, "memory.limit_in_bytes").write_text(str(limit_bytes))
            try:  # memory plus swap, where swap is accounted: swap would be memory past the limit
                Path(folder, "memory.memsw.limit_in_bytes").write_text(str(limit_bytes))
            except OSError:
                pass
    except OSError as e:
        remove_cgroup(folder)
        return None, f"cannot make a memory cgroup in {parent} (cgroup v{version}): {e.strerror or e}"
    return folder, None


def remove_cgroup(folder: str, wait: float = 5.0) -> None:
    """Kill whatever still runs in the cgroup `folder`, then remove it (quietly if it is gone).

    (Called from a worker's SIGTERM handler too: it imports nothing and takes no lock.)
    """
    deadline = time.monotonic() + wait
    while os.path.isdir(folder):
        try:
            os.rmdir(folder)
            return
        except OSError:
            pass
        try:  # cgroup v2 (Linux 5.14+): the kernel kills every member at once, so no fork can outrun it
            kill = os.open(os.path.join(folder, "cgroup.kill"), os.O_WRONLY)  # (never made where it is missing)
            try:
                os.write(kill, b"1")
            finally:
                os.close(kill)
        except OSError:
            pass  # (v1, or a cgroup that refuses it: one by one below)
        try:  # (the kernel is dead by now; what the student left behind goes with it), again until none is left
            for pid in Path(folder, "cgroup.procs").read_text().split():
                os.kill(int(pid), signal.SIGKILL)
        except (OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            return
        time.sleep(0.01)


def memory_cgroup_parent() -> str | None:
    """The cgroup folder below which kernels' memory cgroups are made, or None where none can be."""
    return _own_memory_cgroup()[0]


def cpu_cgroup_parent() -> str | None:
    """The cgroup folder below which kernels' CPU cgroups are made (cgroup v1 only), or None."""
    parent, version = _own_cgroup("cpu")
    return parent if version == 1 else None


def remove_cgroups_of(prefix: str, parent: str | None = None, *others: str | None) -> None:
    """Remove the cgroups named `prefix`* below `parent`, by default this process's memory cgroup (those of a lost
    worker's kernels), and below each of `others` (the CPU hierarchy's, where it is another)."""
    if parent is None:
        parent, _ = _own_memory_cgroup()
    for folder_parent in (parent, *others):
        if folder_parent is not None:
            for folder in Path(folder_parent).glob(f"{prefix}*"):
                if folder.is_dir():
                    remove_cgroup(str(folder))
