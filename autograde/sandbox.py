"""Start a student's kernel inside a bubblewrap sandbox, under memory and file-size limits.

Why bubblewrap and not Landlock: bubblewrap gives the kernel its own mount,
network, PID and IPC namespaces. The submission sees a file system made only
of the system and Python directories (read-only) and its scratch directory: the
solutions, the hidden tests, the gradebook and the other submissions are not
there at all, not merely forbidden. Its network namespace has no interface, so
no protocol reaches out (Landlock only governs TCP bind and connect), and its
PID namespace hides the grader and the other kernels. The cost is one Debian
package (``bubblewrap``) and a kernel that talks to the grader over Unix sockets
(jupyter's IPC transport) in the scratch directory, since TCP cannot cross
network namespaces.

This file runs as a script from the kernel command line, before the kernel
starts, so it uses only the standard library::

    python sandbox.py [--memory MIB] [--file-size MIB] [--no-sandbox] -- python -m ipykernel_launcher -f CONN

The scratch directory is the folder of the connection file ``CONN``; it
becomes the kernel's home, working directory and /tmp.
"""
from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import sysconfig
from pathlib import Path

# System directories the kernel may read; missing ones are skipped.
SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/etc/alternatives", "/etc/fonts",
               "/etc/ssl/certs"]
SYSTEM_FILES = ["/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/hosts",
                "/etc/mime.types"]
SANDBOX_UID = 1000  # the kernel's user id inside the sandbox (root outside only maps to it)


def python_dirs() -> list[str]:
    """The folders this Python's interpreter, standard library and packages live in (read-only in the sandbox)."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    found.update(p for p in (sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")) if p)
    found.add(os.path.dirname(os.path.realpath(sys.executable)))
    # Drop folders inside others, so each is bound once.
    dirs = sorted({os.path.realpath(p) for p in found if os.path.isdir(p)})
    return [d for d in dirs if not any(d != o and d.startswith(o + os.sep) for o in dirs)]


def thread_limits(threads: str) -> dict[str, str]:
    """Environment that keeps NumPy's and PyTorch's thread pools to `threads` (parallel jobs must not oversubscribe)."""
    return {"OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}


def bwrap_command(scratch: str, command: list[str], threads: str = "1") -> list[str]:
    """The bwrap command line that runs `command` with only `scratch` writable and nothing else of the grader visible."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise FileNotFoundError("bwrap (bubblewrap) is not installed")
    # No --new-session: jupyter already starts the kernel in a session of its own, without a terminal (stdin
    # is a pipe, stdout and stderr a log), and the interrupt that ends a cell past its time limit is sent to
    # that session's process group, which must include the kernel.
    args = [bwrap, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--clearenv"]
    home, tmp = os.path.join(scratch, "home"), os.path.join(scratch, "tmp")
    # /tmp first: what is bound later (Python in a virtual environment under /tmp, the scratch folder
    # itself) may lie under /tmp and must not be covered by it.
    args += ["--proc", "/proc", "--dev", "/dev", "--bind", tmp, "/tmp"]
    for d in SYSTEM_DIRS:
        if os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for f in SYSTEM_FILES:
        if os.path.isfile(f):
            args += ["--ro-bind", f, f]
    for d in python_dirs():
        if d not in SYSTEM_DIRS:
            args += ["--ro-bind", d, d]
    args += ["--bind", scratch, scratch, "--chdir", home]
    env = {"HOME": home, "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"]),
           "LANG": "C.UTF-8", "TMPDIR": "/tmp", "MPLCONFIGDIR": os.path.join(home, ".config", "matplotlib"),
           "IPYTHONDIR": os.path.join(home, ".ipython"), "MPLBACKEND": "agg", "PYTHONDONTWRITEBYTECODE": "1",
           **thread_limits(threads)}
    for name, value in env.items():
        args += ["--setenv", name, value]
    return args + ["--"] + command


def prepare_scratch(scratch: str) -> None:
    """Create the home and /tmp folders of the sandbox inside `scratch`."""
    for sub in ("home", "tmp", os.path.join("home", ".config", "matplotlib")):
        os.makedirs(os.path.join(scratch, sub), exist_ok=True)


def check_sandbox() -> str | None:
    """None if kernels can be sandboxed here, else why not (in words an instructor can act on)."""
    if shutil.which("bwrap") is None:
        return ("bubblewrap is not installed, so student code cannot be sandboxed. Install it "
                "(Debian/Ubuntu: apt-get install bubblewrap) or pass --no-sandbox to grade without isolation "
                "(student code could then read the solutions and change grades).")
    import tempfile

    with tempfile.TemporaryDirectory(prefix="ag-check-") as scratch:
        prepare_scratch(scratch)
        probe = "import os, socket; socket.socket(); print(sorted(os.listdir('/')))"
        try:
            proc = subprocess.run(bwrap_command(scratch, [sys.executable, "-c", probe]), capture_output=True,
                                  text=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as e:
            return f"bubblewrap could not be started ({e}); pass --no-sandbox to grade without isolation."
    if proc.returncode != 0:
        return (f"bubblewrap cannot create a sandbox on this machine ({proc.stderr.strip()[:300]}); user namespaces may "
                "be disabled. Enable them (sysctl kernel.unprivileged_userns_clone=1) or pass --no-sandbox.")
    return None


def set_limits(memory_mib: int, file_size_mib: int) -> None:
    """Limit this process and its children: address space, size of any file written, no core dumps."""
    memory, size = memory_mib * 2**20, file_size_mib * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def main(argv: list[str]) -> None:
    """Parse the launcher's options, then replace this process with the (sandboxed) kernel."""
    import argparse

    parser = argparse.ArgumentParser(description="start a Jupyter kernel in a sandbox")
    parser.add_argument("--memory", type=int, default=4096, help="address-space limit in MiB")
    parser.add_argument("--file-size", type=int, default=512, help="largest file the kernel may write, in MiB")
    parser.add_argument("--threads", default="1", help="threads for NumPy and PyTorch")
    parser.add_argument("--no-sandbox", action="store_true", help="only apply the limits")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the kernel command")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    connection = command[command.index("-f") + 1]
    scratch = os.path.dirname(os.path.abspath(connection))
    prepare_scratch(scratch)
    set_limits(args.memory, args.file_size)
    # The kernel's own chatter (banner, warnings, a crash's last words) goes to a log, not the grader's terminal.
    log = os.open(os.path.join(scratch, "kernel.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # never a terminal (TIOCSTI could type into it)
    if args.no_sandbox:
        os.execve(command[0], command, {**os.environ, **thread_limits(args.threads)})
    # The interrupt for a cell past its time limit goes to the whole process group: bwrap must survive it
    # (it would die, and the kernel with it). The kernel sets its own SIGINT handler while it runs a cell.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    full = bwrap_command(scratch, command, args.threads)
    os.execv(full[0], full)


if __name__ == "__main__":
    main(sys.argv[1:])


LAUNCHER = Path(__file__).resolve()
