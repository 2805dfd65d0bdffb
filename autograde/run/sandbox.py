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

Processes and disk: the kernel's /tmp (which holds its home and working
directory) and /dev/shm are tmpfs of ``--disk`` MiB each, the only writable
places in the sandbox, so a notebook cannot fill the grader's disk (or memory)
with many files. ``RLIMIT_NPROC`` is
set inside the sandbox, where it is counted per user namespace (unprivileged
bubblewrap) or per user: when the grader runs as root, whom the kernel exempts
from that limit, bubblewrap runs privileged and the sandbox's first process
drops to a user id of its own (``SANDBOX_UID_BASE`` + the launcher's pid) before
anything of the student's runs. Dropping to ``nobody`` before bubblewrap would
not do: bubblewrap could then not read a Python installed in a folder only root
may enter (``/root/.pyenv``, as on CI).

User namespaces: student code may not make its own (it would be root in
it). Unprivileged, bubblewrap's ``--disable-userns`` does it; as root, the
sandbox's first process does the same itself (see ``INNER``). The sandbox's
``/etc/passwd`` and ``/etc/group`` are its own (:func:`account_files`).

Memory: ``--memory`` limits each process's address space; with ``--cgroup``
(a cgroup the kernel manager made, :func:`make_memory_cgroup`) the launcher
first joins that cgroup, whose memory limit holds for all the kernel's
processes together and which no process in the sandbox can leave (cgroupfs
is not mounted there).

The kernel's sockets live in that tmpfs too; the grader reaches them through
``/proc/<pid>/root`` of the sandbox's first process, whose pid bubblewrap
writes to ``sandbox.json`` (``--info-fd``) in the scratch folder.

This file runs as a script from the kernel command line, before the kernel
starts, so it uses only the standard library::

    python sandbox.py --memory MIB --file-size MIB --threads N --processes N --disk MIB [--cgroup DIR] \
        [--no-sandbox] -- python -m ipykernel_launcher -f CONN

The scratch folder is the folder of the connection file ``CONN``: it holds the
connection file, ``kernel.log`` (the kernel's stdout and stderr) and
``sandbox.json``; with ``--no-sandbox`` or ``--user`` it is also the kernel's home and /tmp.

Where bubblewrap cannot run (Docker's default seccomp profile blocks the
namespaces it needs, as on Gradescope: containers/bubblewrap#505), ``--user``
runs the kernel as an unprivileged user of its own instead (the grader must
be root): ``SANDBOX_UID_BASE`` + the launcher's pid, no groups, no new
privileges, its process limit counted per user, its home and /tmp in the
scratch folder it owns, a network namespace with no interface where root may
make one. It sees the machine's files as any other user does, so the
grader's (the repository, the submissions, the results) must be closed to
other users: :func:`check_user_sandbox` proves they are before anything is
graded. It also sees other processes' command lines in /proc.
"""
from __future__ import annotations

import functools
import json
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
# (Not /etc/passwd and /etc/group: the sandbox gets its own, naming only its user, root and nobody.)
SYSTEM_FILES = ["/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf", "/etc/hosts", "/etc/mime.types"]
SANDBOX_UID = 1000  # the kernel's user id inside an unprivileged sandbox (the grader's user outside)
# When the grader is root, each sandbox runs as a user id of its own: this plus the launcher's pid (pid_max is at
# most 2**22), below 2**31 and above the ranges container tools hand out.
SANDBOX_UID_BASE = 2_000_000_000
INFO_FILE = "sandbox.json"  # bubblewrap's --info-fd output, in the scratch folder
KERNEL_IPC = "/tmp/.ipc/kernel"  # the kernel's sockets (ipc transport) inside the sandbox: <this>-<port>
HOME = "/tmp/home"  # the kernel's home and working folder inside the sandbox

# The sandbox's first process, as root only until it drops to the sandbox's user: set the process limit there,
# where it counts the sandbox's own processes, make home and the socket folder, then start the kernel. Where
# bubblewrap's --disable-userns cannot be used (the grader is root: bubblewrap's user namespace would map the
# sandbox to root outside), it does what that option does: it enters a user namespace of its own, as the sandbox's
# user and mapped to it, whose limit of nested user namespaces is 0; the kernel, not root there, cannot raise it.
INNER = """\
import ctypes, os, resource, sys
uid, processes, home, ipc, no_userns = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5] == "1"
if os.getuid() == 0:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
if no_userns:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: changing user made /proc/self root's, and its maps unwritable
    # If this user may not make a user namespace (EPERM, ENOSPC), student code, with no more rights, may not either.
    if libc.unshare(0x10000000) == 0:  # CLONE_NEWUSER
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{uid} {uid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
        with open("/proc/sys/user/max_user_namespaces", "w") as f:
            f.write("0")
        with open("/proc/sys/user/max_user_namespaces") as f:  # as --assert-userns-disabled: never go on unsure
            if f.read().strip() != "0":
                sys.exit("the sandbox could not disable user namespaces")
if processes > 0:
    resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
for folder in (home, ipc):
    os.makedirs(folder, exist_ok=True)
os.chdir(home)
os.execv(sys.argv[6], sys.argv[6:])
"""


def python_dirs() -> list[str]:
    """The folders this Python's interpreter, standard library and packages live in (read-only in the sandbox).

    Both the paths Python reports and their real paths: a virtual environment
    reached through a symbolic link must be found at either.
    """
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, os.path.dirname(sys.executable)}
    found.update(p for p in (sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")) if p)
    found.add(os.path.dirname(os.path.realpath(sys.executable)))
    found |= {os.path.realpath(p) for p in found}
    # Drop folders inside others, so each is bound once.
    dirs = sorted({os.path.normpath(p) for p in found if os.path.isdir(p)})
    return [d for d in dirs if not any(d != o and d.startswith(o + os.sep) for o in dirs)]


def thread_limits(threads: str) -> dict[str, str]:
    """Environment that keeps NumPy's and PyTorch's thread pools to `threads` (parallel jobs must not oversubscribe)."""
    return {"OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}


def process_limit(processes: int, threads: str) -> int:
    """RLIMIT_NPROC for a kernel: `processes` beyond its NumPy and PyTorch thread pools (threads count as processes)."""
    return processes + 2 * int(threads) if processes > 0 else 0


def _ancestors(paths: list[str]) -> list[str]:
    """Folders above `paths` that are not themselves bound, shallowest first."""
    found = {str(parent) for p in paths for parent in Path(p).parents if str(parent) not in ("/", "/tmp")}
    return sorted((d for d in found if not any(d == p or d.startswith(p + "/") for p in paths)),
                  key=lambda d: d.count("/"))


@functools.cache
def supports(option: str) -> bool:
    """Whether the installed bubblewrap knows `option` (per its --help)."""
    try:
        found = subprocess.run([shutil.which("bwrap") or "bwrap", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return option in found.stdout + found.stderr


def account_files(uid: int) -> dict[str, str]:
    """The sandbox's /etc/passwd and /etc/group: its own user (``student``, `uid`), root and nobody, nothing else."""
    return {"passwd": f"root:x:0:0:root:/root:/usr/sbin/nologin\n"
                      f"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
                      f"student:x:{uid}:{uid}:student:{HOME}:/bin/sh\n",
            "group": f"root:x:0:\nnogroup:x:65534:\nstudent:x:{uid}:\n"}


def bwrap_command(scratch: str, command: list[str], threads: str = "1", processes: int = 0, disk_mib: int = 0,
                  connection: str | None = None, info_fd: int | None = None) -> list[str]:
    """The bwrap command line that runs `command` with nothing of the grader visible and nothing on its disk writable.

    /tmp (home and working folder included) and /dev/shm are tmpfs of
    `disk_mib` MiB each (unbounded if 0); at most `processes` processes beyond the thread pools
    (unlimited if 0). `connection`, the kernel's connection file, is visible
    read-only at its path; bubblewrap writes the sandbox's pids to `info_fd`.
    """
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise FileNotFoundError("bwrap (bubblewrap) is not installed")
    # No --new-session: jupyter already starts the kernel in a session of its own, without a terminal (stdin
    # is a pipe, stdout and stderr a log), and the interrupt that ends a cell past its time limit is sent to
    # that session's process group, which must include the kernel.
    args = [bwrap, "--die-with-parent", "--clearenv"]
    if os.geteuid() == 0:
        # Privileged: no user namespace (in one, the kernel would still be root outside and escape RLIMIT_NPROC);
        # INNER drops to the sandbox's own user with these two capabilities, which setresuid then clears, and
        # disables nested user namespaces itself (bubblewrap's --disable-userns needs its --unshare-user).
        args += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                 "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        uid = SANDBOX_UID_BASE + os.getpid()
        inner_disables_userns = True
    else:
        args += ["--unshare-all", "--cap-drop", "ALL", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
        uid = SANDBOX_UID
        # Student code must not make user namespaces of its own (root there: mounts, and much of the kernel's
        # attack surface). bubblewrap >= 0.8 does it; an older one leaves it to INNER, which can do the same.
        inner_disables_userns = not supports("--disable-userns")
        if not inner_disables_userns:
            args += ["--unshare-user", "--disable-userns", "--assert-userns-disabled"]
    # /tmp first: what is bound later (Python in a virtual environment under /tmp, the connection file) may lie
    # under /tmp and must not be covered by it.
    args += ["--proc", "/proc", "--dev", "/dev"]
    # /dev/shm (semaphores, shared memory: multiprocessing needs it) gets a tmpfs of its own, as limited.
    for folder in ("/tmp", "/dev/shm"):
        args += ["--perms", "1777"] + (["--size", str(disk_mib * 2**20)] if disk_mib > 0 else []) + ["--tmpfs", folder]
    binds = [(d, d) for d in SYSTEM_DIRS if os.path.isdir(d)] + [(f, f) for f in SYSTEM_FILES if os.path.isfile(f)]
    binds += [(os.path.realpath(d), d) for d in python_dirs() if d not in SYSTEM_DIRS]
    if connection is not None:
        binds.append((connection, connection))
    # The host's users and groups are none of the sandbox's business: its own files name only its user.
    for name, text in account_files(uid).items():
        path = os.path.join(scratch, name)
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), "w") as f:
            f.write(text)
        os.chmod(path, 0o644)  # (whatever the umask: the sandbox's user reads it)
        binds.append((path, f"/etc/{name}"))
    # Folders bubblewrap creates on the way to a bound path would be root's and closed (0700) to the sandbox's user.
    for folder in _ancestors([dest for _, dest in binds]):
        args += ["--perms", "0755", "--dir", folder]
    for source, dest in binds:
        args += ["--ro-bind", source, dest]
    if info_fd is not None:
        args += ["--info-fd", str(info_fd)]
    env = {"HOME": HOME, "USER": "student", "LOGNAME": "student",
           "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"]),
           "LANG": "C.UTF-8", "TMPDIR": "/tmp", "MPLCONFIGDIR": os.path.join(HOME, ".config", "matplotlib"),
           "IPYTHONDIR": os.path.join(HOME, ".ipython"), "MPLBACKEND": "agg", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONFAULTHANDLER": "1", **thread_limits(threads)}
    for name, value in env.items():
        args += ["--setenv", name, value]
    inner = [sys.executable, "-I", "-S", "-c", INNER, str(uid), str(process_limit(processes, threads)), HOME,
             os.path.dirname(KERNEL_IPC), "1" if inner_disables_userns else "0"]
    return args + ["--"] + inner + command


def readable_folders() -> list[str]:
    """The folders student code can read in the sandbox (the system's and this Python's), as real paths."""
    found = [d for d in SYSTEM_DIRS if os.path.isdir(d)] + python_dirs()
    return sorted({os.path.realpath(d) for d in found} | {os.path.normpath(d) for d in found})


def exposed(paths: dict[str, Path], readable: list[str] | None = None) -> str | None:
    """None if none of `paths` (what it is -> path) lies in a folder the sandbox can read, else the problem in words.

    The grader's own files (the repository with the solutions and hidden tests,
    the submissions, the grades in --out) must not be there: student code could read them.
    """
    readable = readable_folders() if readable is None else readable
    for what, path in paths.items():
        for form in dict.fromkeys([os.path.normpath(os.path.abspath(path)), os.path.realpath(path)]):
            for folder in readable:
                if form == folder or form.startswith(folder.rstrip("/") + "/"):
                    return (f"{path} ({what}) is inside {folder}, which the sandbox lets student code read: "
                            f"it could read {what}. Move {path} out of {folder}.")
    return None


def prepare_scratch(scratch: str) -> None:
    """Create the home and /tmp folders of an unsandboxed kernel inside `scratch`."""
    for sub in ("home", "tmp", os.path.join("home", ".config", "matplotlib")):
        os.makedirs(os.path.join(scratch, sub), exist_ok=True)


def check_sandbox(protected: dict[str, Path] | None = None) -> str | None:
    """None if kernels can be sandboxed here, else why not (in words an instructor can act on).

    `protected` (what it is -> path) names the grader's files, which must lie
    outside every folder the sandbox can read (:func:`exposed`).
    """
    problem = exposed(protected or {})
    if problem is not None:
        return problem
    if shutil.which("bwrap") is None:
        return ("bubblewrap is not installed, so student code cannot be sandboxed. Install it "
                "(Debian/Ubuntu: apt-get install bubblewrap) or pass --no-sandbox to grade without isolation "
                "(student code could then read the solutions and change grades).")
    import tempfile

    with tempfile.TemporaryDirectory(prefix="ag-check-") as scratch:
        probe = "import os, socket; socket.socket(); print(sorted(os.listdir('/')))"
        try:
            proc = subprocess.run(bwrap_command(scratch, [sys.executable, "-c", probe], processes=64, disk_mib=16),
                                  capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as e:
            return f"bubblewrap could not be started ({e}); pass --no-sandbox to grade without isolation."
    if proc.returncode != 0:
        return (f"bubblewrap cannot create a sandbox on this machine ({proc.stderr.strip()[:300]}); user namespaces may "
                "be disabled. Enable them (sysctl kernel.unprivileged_userns_clone=1) or pass --no-sandbox.")
    return None


CLONE_NEWNET = 0x40000000
PR_SET_NO_NEW_PRIVS = 38


def kernel_environment(scratch: str, threads: str) -> dict[str, str]:
    """The whole environment of a kernel run outside bubblewrap (as a user of its own, ``--user``, or unsandboxed,
    ``--no-sandbox``): its home and /tmp in `scratch`, and nothing of the grader's (tokens, keys, paths)."""
    home = os.path.join(scratch, "home")
    return {"HOME": home, "USER": "student", "LOGNAME": "student",
            "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"]),
            "LANG": "C.UTF-8", "TMPDIR": os.path.join(scratch, "tmp"),
            "MPLCONFIGDIR": os.path.join(home, ".config", "matplotlib"), "IPYTHONDIR": os.path.join(home, ".ipython"),
            "MPLBACKEND": "agg", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONFAULTHANDLER": "1", **thread_limits(threads)}


def exec_as_user(scratch: str, command: list[str], threads: str = "1", processes: int = 0) -> None:
    """Replace this process (root's) with `command` run as an unprivileged user of its own, whose home and /tmp are
    in `scratch` (which it then owns): no groups, no new privileges (``PR_SET_NO_NEW_PRIVS``: no setuid program
    gives root back), at most `processes` processes beyond the thread pools (counted for that user alone), and a
    network namespace with no interface where root may make one (Docker's default profile forbids it)."""
    import ctypes

    if os.geteuid() != 0:
        raise PermissionError("running the kernel as a user of its own needs the grader to be root")
    uid = SANDBOX_UID_BASE + os.getpid()
    prepare_scratch(scratch)
    for folder, dirs, files in os.walk(scratch):  # (the connection file, home, /tmp: the kernel's own)
        for path in [folder] + [os.path.join(folder, f) for f in dirs + files]:
            os.chown(path, uid, uid, follow_symlinks=False)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.unshare(CLONE_NEWNET)  # (failure leaves the network as it is: check_user_sandbox says which)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "could not set no_new_privs")
    if processes > 0:
        limit = process_limit(processes, threads)
        resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))
    os.chdir(os.path.join(scratch, "home"))
    os.execve(command[0], command, kernel_environment(scratch, threads))


def kill_user_processes(uid: int) -> None:
    """Kill every process of user `uid` (a kernel's own user, ``--user``: what it left running, however detached)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    os.kill(int(entry), signal.SIGKILL)
            except (OSError, ProcessLookupError):
                pass


# What check_user_sandbox's probe runs as the kernel's user: which of the paths given can be read, and the network.
_USER_PROBE = """\
import json, os, socket, sys
readable = []
for path in sys.argv[1:-2]:
    try:
        os.listdir(path) if os.path.isdir(path) else open(path, "rb").close()
        readable.append(path)
    except OSError:
        pass
interfaces = sorted(name for _, name in socket.if_nameindex())
print(json.dumps({"uid": os.getuid(), "readable": readable, "interfaces": interfaces}))
"""


def check_user_sandbox(protected: dict[str, Path] | None = None) -> tuple[str | None, dict]:
    """(None if kernels can run here as a user of their own, else why not in words an instructor can act on; what
    the probe found: its user id, the network interfaces it saw).

    A probe is started as the kernel would be (this launcher, ``--user``): it
    must run this Python, and read none of `protected` (what it is -> path:
    the grader's files, which must be closed to other users).
    """
    import tempfile

    if os.geteuid() != 0:
        return ("running student code as a user of its own needs the grader to run as root (it is not); install "
                "bubblewrap, or pass --no-sandbox to grade without isolation."), {}
    paths = {what: str(Path(path).absolute()) for what, path in (protected or {}).items()}
    with tempfile.TemporaryDirectory(prefix="ag-check-") as scratch:
        connection = os.path.join(scratch, "kernel.json")
        Path(connection).write_text("{}")
        command = [sys.executable, "-I", "-c", _USER_PROBE, *paths.values(), "-f", connection]
        try:
            proc = subprocess.run([sys.executable, str(LAUNCHER), "--memory", "1024", "--file-size", "16", "--threads",
                                   "1", "--processes", "64", "--disk", "16", "--user", "--", *command],
                                  capture_output=True, text=True, timeout=60)
            found = json.loads(Path(scratch, "kernel.log").read_text().strip().splitlines()[-1])
        except (OSError, subprocess.SubprocessError, ValueError, IndexError) as e:
            log = Path(scratch, "kernel.log")
            lines = log.read_text().strip().splitlines() if log.is_file() else []
            said = lines[-1][-300:] if lines else ""
            return (f"{sys.executable} cannot be run by an unprivileged user ({said or e}); install Python and the "
                    "packages where other users can read them (not under /root), outside the grader's folders."), {}
    if proc.returncode != 0:
        return f"the kernel's user could not be set up ({proc.stderr.strip()[:300]})", found
    exposed_ = [f"{path} ({what})" for what, path in paths.items() if path in found["readable"]]
    if exposed_:
        return (f"an unprivileged user can read {', '.join(exposed_)}: student code could read it. Close it to other "
                "users (chmod 700 on it or a folder above it)."), found
    return None, found


def sandbox_pid(scratch: str) -> int | None:
    """The pid of the sandbox's first process, once bubblewrap has written it to the scratch folder; else None."""
    try:
        return int(json.loads(Path(scratch, INFO_FILE).read_text())["child-pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def join_cgroup(folder: str) -> None:
    """Move this process (and so all it starts) into the cgroup `folder`."""
    Path(folder, "cgroup.procs").write_text(str(os.getpid()))


def set_limits(memory_mib: int, file_size_mib: int) -> None:
    """Limit this process and its children: address space, size of any file written, no core dumps."""
    memory, size = memory_mib * 2**20, file_size_mib * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def main(argv: list[str]) -> None:
    """Parse the launcher's options, then replace this process with the (sandboxed) kernel."""
    import argparse

    # No defaults here: the kernel manager passes every limit (its settings are the one place they are chosen).
    parser = argparse.ArgumentParser(description="start a Jupyter kernel in a sandbox")
    parser.add_argument("--memory", type=int, required=True, help="address-space limit in MiB")
    parser.add_argument("--file-size", type=int, required=True, help="largest file the kernel may write, in MiB")
    parser.add_argument("--threads", required=True, help="threads for NumPy and PyTorch")
    parser.add_argument("--processes", type=int, required=True, help="processes beyond the thread pools (0: no limit)")
    parser.add_argument("--disk", type=int, required=True, help="size of the sandbox's /tmp in MiB (0: no limit)")
    parser.add_argument("--cgroup", action="append", default=[], help="a cgroup folder to join first (its memory "
                        "and CPU limits hold for the kernel's processes together); may be given once per hierarchy")
    parser.add_argument("--no-sandbox", action="store_true", help="only apply the memory and file-size limits")
    parser.add_argument("--user", action="store_true", help="no bubblewrap: run the kernel as an unprivileged user "
                        "of its own (the grader must be root; see exec_as_user)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the kernel command")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    connection = os.path.abspath(command[command.index("-f") + 1])
    scratch = os.path.dirname(connection)
    for folder in args.cgroup:  # before anything else starts: every process of the kernel's is in it, and cannot leave
        join_cgroup(folder)
    set_limits(args.memory, args.file_size)
    # The kernel's own chatter (banner, warnings, a crash's last words) goes to a log, not the grader's terminal.
    log = os.open(os.path.join(scratch, "kernel.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # never a terminal (TIOCSTI could type into it)
    if args.no_sandbox:
        prepare_scratch(scratch)
        os.execve(command[0], command, kernel_environment(scratch, args.threads))
    if args.user:
        exec_as_user(scratch, command, args.threads, args.processes)
    os.chmod(connection, 0o644)  # readable by the sandbox's own user; the scratch folder stays closed (0700)
    info = os.open(os.path.join(scratch, INFO_FILE), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.set_inheritable(info, True)
    # The interrupt for a cell past its time limit goes to the whole process group: bwrap must survive it
    # (it would die, and the kernel with it). The kernel sets its own SIGINT handler while it runs a cell.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    full = bwrap_command(scratch, command, args.threads, args.processes, args.disk, connection, info)
    os.execv(full[0], full)


if __name__ == "__main__":
    main(sys.argv[1:])


LAUNCHER = Path(__file__).resolve()
