"""The sandbox hardened to what bubblewrap offers (issue 19), each proved through the sandbox for real.

No nested user namespaces, a minimal /etc/passwd, no grading while the
repository, the submissions or --out lie in a folder the sandbox can read, a
wall-clock limit per notebook and a memory limit for a kernel's processes
together. The kernel-level cases run one launcher; the grading cases grade a
few chapter-1 notebooks of their own (never the session's big batch).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograde.course import REPO, assignment_ids, cells_checking, graded_cell_ids, source_notebook
from autograde.reference import solution_code
from autograde.run import cgroups, sandbox
from tests.support.commands import grade_command, read_rows, repo_copy
from tests.support.scenarios import kept
from tests.support.scratch import ScratchWatch
from tests.support.synthetic import completed_notebook, write_submission

FIRST = assignment_ids()[0]


def in_sandbox(tmp_path: Path, probe: str, *options: str) -> str:
    """What `probe` (Python code) prints when the grader's launcher runs it in the sandbox, as a kernel would run."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "kernel.json").write_text("{}")
    launcher = [sys.executable, str(sandbox.LAUNCHER), "--memory", "2000", "--file-size", "16", "--threads", "1",
                "--processes", "32", "--disk", "16", *options, "--"]
    subprocess.run(launcher + [sys.executable, "-c", probe, "-f", str(scratch / "kernel.json")], check=True, timeout=60)
    return (scratch / "kernel.log").read_text()


# 1. No nested user namespaces -----------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.sandbox
def test_without_the_sandbox_the_kernel_gets_none_of_the_graders_environment(tmp_path, monkeypatch):
    # --no-sandbox leaves files open, but the grader's environment (tokens, keys, its paths) is not handed over.
    monkeypatch.setenv("GRADERS_SECRET_TOKEN", "hunter2")
    probe = "import os, json; print(json.dumps(dict(os.environ)))"
    seen = json.loads(in_sandbox(tmp_path, probe, "--no-sandbox").strip().splitlines()[-1])
    assert "GRADERS_SECRET_TOKEN" not in seen and "hunter2" not in json.dumps(seen), sorted(seen)
    assert seen["HOME"].startswith(str(tmp_path)) and seen["TMPDIR"].startswith(str(tmp_path)), seen
    assert seen["OMP_NUM_THREADS"] == "1", "the thread limits must still be set"


def test_student_code_cannot_make_a_user_namespace(tmp_path):
    # A user namespace of its own would make student code root in it: mounts, and the kernel's attack surface
    # for root-in-a-namespace. Both ways in: the unshare(2) call and the unshare(1) tool.
    probe = ("import ctypes, json, subprocess\nlibc = ctypes.CDLL(None, use_errno=True)\n"
             "result = libc.unshare(0x10000000)  # CLONE_NEWUSER\nerrno = ctypes.get_errno()\n"
             "tool = subprocess.run(['unshare', '-U', 'true'], capture_output=True, text=True)\n"
             "print(json.dumps([result, errno, tool.returncode, tool.stderr]))")
    result, errno, tool, stderr = json.loads(in_sandbox(tmp_path, probe).splitlines()[-1])
    assert result == -1, "unshare(CLONE_NEWUSER) succeeded inside the sandbox"
    assert tool != 0, f"unshare -U succeeded inside the sandbox: {stderr}"


@pytest.mark.slow
@pytest.mark.sandbox
def test_without_user_namespaces_the_process_limit_still_holds(tmp_path):
    # (Disabling user namespaces must not undo the process limit: 32 here, beyond the two thread pools.)
    probe = ("import os\nforked = 0\ntry:\n    for _ in range(100):\n        if os.fork() == 0:\n"
             "            import time; time.sleep(5); os._exit(0)\n        forked += 1\n"
             "except OSError as e:\n    print('stopped', forked, e.errno)\nelse:\n    print('forked', forked)\n")
    last = in_sandbox(tmp_path, probe).splitlines()[-1].split()
    assert last[0] == "stopped" and int(last[1]) <= 34, f"the process limit did not hold: {last}"


@pytest.mark.slow
@pytest.mark.sandbox
def test_unprivileged_the_sandbox_disables_user_namespaces_and_hides_the_hosts_users():
    # Most instructors grade as themselves, not root: then bubblewrap runs unprivileged, with --disable-userns.
    # Run as root, this test plays such a user (nobody), with the system's Python (the launcher needs only the
    # standard library) and a copy of the launcher that user can read.
    import shutil
    import tempfile

    python = shutil.which("python3", path="/usr/bin:/bin")
    if os.geteuid() != 0 or shutil.which("setpriv") is None or python is None:
        pytest.skip("needs root (to become an unprivileged user), setpriv and /usr/bin/python3")
    scratch = Path(tempfile.mkdtemp(prefix="ag-unprivileged-"))
    try:
        shutil.copy(sandbox.LAUNCHER, scratch / "sandbox.py")
        (scratch / "kernel.json").write_text("{}")
        for path in (scratch, scratch / "sandbox.py", scratch / "kernel.json"):
            os.chown(path, 65534, 65534)
        probe = ("import ctypes, json, os, pwd, subprocess\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                 "print(json.dumps([libc.unshare(0x10000000), subprocess.run(['unshare', '-U', 'true']).returncode, "
                 "open('/etc/passwd').read(), pwd.getpwuid(os.getuid()).pw_name]))")
        subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", python,
                        str(scratch / "sandbox.py"), "--memory", "2000", "--file-size", "16", "--threads", "1",
                        "--processes", "32", "--disk", "16", "--", python, "-c", probe, "-f",
                        str(scratch / "kernel.json")], check=True, timeout=60)
        result, tool, passwd, me = json.loads((scratch / "kernel.log").read_text().splitlines()[-1])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    assert result == -1 and tool != 0, "an unprivileged sandbox let student code make a user namespace"
    users = {line.split(":")[0] for line in passwd.splitlines() if line}
    assert users <= {"root", "nobody", "student"} and me == "student", (users, me)


# 2. A minimal /etc/passwd ---------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.sandbox
def test_the_sandbox_sees_only_its_own_users(tmp_path):
    probe = ("import json, os, pwd\ntry:\n    me = pwd.getpwuid(os.getuid()).pw_name\nexcept KeyError:\n    me = None\n"
             "print(json.dumps([open('/etc/passwd').read(), open('/etc/group').read(), me]))")
    passwd, group, me = json.loads(in_sandbox(tmp_path, probe).splitlines()[-1])
    users = {line.split(":")[0] for line in passwd.splitlines() if line}
    groups = {line.split(":")[0] for line in group.splitlines() if line}
    assert users <= {"root", "nobody", "student"}, f"the host's users are visible in the sandbox: {sorted(users)}"
    assert groups <= {"root", "nogroup", "student"}, f"the host's groups are visible in the sandbox: {sorted(groups)}"
    assert me == "student", f"the kernel's user is {me!r} in the sandbox's /etc/passwd"


# 3. Nothing of the grader's in a folder the sandbox can read ----------------------------------------------------

def test_paths_inside_a_folder_the_sandbox_reads_are_refused():
    readable = ["/usr", "/opt/venv"]
    assert sandbox.exposed({"the repository": Path("/srv/course"), "--out": Path("/srv/out")}, readable) is None
    problem = sandbox.exposed({"the repository": Path("/srv/course"), "--out": Path("/opt/venv/grades")}, readable)
    assert problem is not None and "--out" in problem and "/opt/venv" in problem, problem
    problem = sandbox.exposed({"the submissions": Path("/usr/local/share/class")}, readable)
    assert problem is not None and "the submissions" in problem and "/usr" in problem, problem
    # A folder that holds a readable one (a repository with its venv inside) is not readable itself.
    assert sandbox.exposed({"the repository": Path("/opt")}, readable) is None
    assert sandbox.exposed({"--out": Path("/usr")}, readable) is not None
    assert sandbox.exposed({"--out": Path("/usrx/out")}, readable) is None


def test_the_folders_the_sandbox_reads_include_the_system_and_this_python():
    readable = sandbox.readable_folders()
    assert "/usr" in readable
    assert any(Path(sys.prefix).resolve() == Path(d) or Path(sys.prefix).resolve().is_relative_to(d)
               for d in readable), (sys.prefix, readable)


@pytest.mark.slow
@pytest.mark.sandbox
def test_grading_refuses_submissions_in_a_folder_the_sandbox_reads(tmp_path):
    # A virtual environment of our own (this Python plus the project's packages) makes a folder the sandbox
    # reads that the test may write to: its prefix.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next(venv.glob("lib/python3*/site-packages"))
    import sysconfig

    (site / "project.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    write_submission(completed_notebook(FIRST), venv / "class", "someone", FIRST)
    proc = subprocess.run([str(venv / "bin" / "python"), "-m", "autograde", "grade", str(venv / "class"), "--out",
                           str(tmp_path / "out"), "--quiet", "--jobs", "1"], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode != 0, f"graded submissions that student code could read:\n{proc.stdout}"
    assert str(venv) in proc.stderr and "the submissions" in proc.stderr, proc.stderr
    assert not (tmp_path / "out" / "scores.csv").exists()


# 4 and 5. Per-notebook time limit; memory for a kernel's processes together ------------------------------------

NOTEBOOK_TIMEOUT = 30  # seconds for a whole notebook in the batch below
CELL_TIMEOUT = 20  # seconds per cell: each sleep below is under it
SLEEP = 12


def reference(grade_id: str) -> str:
    """The reference answer of chapter 1's `grade_id`."""
    cell = next(c for c in source_notebook(FIRST).cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    return solution_code(cell.source)


def sleeping(grade_id: str) -> str:
    """The reference answer, after a sleep under the cell limit."""
    return f"import time\ntime.sleep({SLEEP})\n" + reference(grade_id)


# Four children of 700 MiB each, resident (bytes are written): each is far under the 2048 MiB address space a
# process may have, together past 2048 MiB for the kernel's processes. The answer is defined only if all lived.
FORKS_TO_FILL_MEMORY = (
    "import subprocess, sys\nchildren = [subprocess.Popen([sys.executable, '-c', "
    "'import time; block = b\"x\" * (700 * 2**20); time.sleep(5)']) for _ in range(4)]\n"
    "codes = [child.wait() for child in children]\n"
    "assert codes == [0, 0, 0, 0], f'a child died: {codes}'\n\n" + "{reference}")


@pytest.fixture(scope="module")
def limited():
    """A notebook that runs past the notebook limit, one whose children fill memory, and the reference (a kept
    scenario: :mod:`tests.support.scenarios`)."""
    return kept("notebook-limit-and-memory", __file__, _grade_limited)


def _grade_limited(base: Path) -> dict:
    copy = repo_copy(base / "repo")
    config = copy / "autograde" / "nbgrader_config.py"
    text = config.read_text()
    assert "c.SandboxKernelManager.memory_mib = 4096" in text
    config.write_text(text.replace("c.SandboxKernelManager.memory_mib = 4096", "c.SandboxKernelManager.memory_mib = 2048")
                      + f"\nc.GuardedExecute.notebook_timeout = {NOTEBOOK_TIMEOUT}\n")
    slow = {g: sleeping(g) for g in ("softmax", "weighted_average", "dot_scores")}
    write_submission(completed_notebook(FIRST, slow), base / "class", "slowpoke", FIRST)
    hog = FORKS_TO_FILL_MEMORY.replace("{reference}", reference("dot_scores"))
    write_submission(completed_notebook(FIRST, {"dot_scores": hog}), base / "class", "forks-to-fill-memory", FIRST)
    write_submission(completed_notebook(FIRST), base / "class", "reference", FIRST)
    scratch = base / "scratch"
    scratch.mkdir()
    # A kernel's cgroup is named as its scratch folder: the names seen in this run's own scratch folder are the
    # cgroups to look for (other gradings on the machine have theirs in the same parent cgroup).
    with ScratchWatch(scratch) as watch:
        proc = grade_command(base / "class", base / "out", "--timeout", str(CELL_TIMEOUT), "--jobs", "1",
                             "--scratch", str(scratch), cwd=copy)
    assert proc.returncode == 0, proc.stderr
    shutil.rmtree(copy)  # (a whole repository: not kept)
    scores = {(r["student_id"], r["grade_id"]): r for r in read_rows(base / "out" / "scores.csv")}
    parent, _ = cgroups._own_memory_cgroup()
    left = sorted(str(Path(parent, name)) for name in watch.seen[scratch] if Path(parent, name).exists()) \
        if parent is not None else []
    return {"scores": scores, "stderr": proc.stderr, "out": base / "out", "cgroups_left": left,
            "kernels": watch.seen[scratch]}


@pytest.mark.slow
@pytest.mark.sandbox
def test_cells_past_the_notebook_time_limit_count_as_timed_out(limited):
    scores = limited["scores"]
    first = cells_checking("softmax", graded_cell_ids(FIRST))
    assert all(scores[("slowpoke", c)]["status"] == "passed" for c in first), [scores[("slowpoke", c)] for c in first]
    # Cells far past the limit (12 s sleeps in the first three answers, 30 s for the notebook) never ran.
    late = cells_checking("attention_pool", graded_cell_ids(FIRST)) + cells_checking("gaussian_scores",
                                                                                      graded_cell_ids(FIRST))
    rows = [scores[("slowpoke", c)] for c in late]
    assert all(r["status"] == "timeout" and float(r["score"]) == 0 for r in rows), rows
    reference_rows = [r for (s, _), r in scores.items() if s == "reference"]
    assert {r["status"] for r in reference_rows} == {"passed"}, reference_rows


def memory_cgroup_problem() -> str | None:
    """Why no memory cgroup can be made here (None if one can)."""
    folder, problem = cgroups.make_memory_cgroup(f"ag-test-{os.getpid()}", 64 * 2**20)
    if folder is not None:
        cgroups.remove_cgroup(folder)
    return problem


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_kernels_processes_share_one_memory_limit(limited):
    problem = memory_cgroup_problem()
    if problem is not None:
        pytest.skip(f"no memory cgroup can be made on this machine ({problem}); each process has only its own limit")
    scores = limited["scores"]
    own = cells_checking("dot_scores", graded_cell_ids(FIRST))
    rows = [scores[("forks-to-fill-memory", c)] for c in own]
    assert all(r["status"] in ("error", "crashed") and float(r["score"]) == 0 for r in rows), rows
    others = [r for (s, c), r in scores.items() if s == "forks-to-fill-memory" and c not in own
              and "dot_scores" not in next(x.source for x in source_notebook(FIRST).cells
                                            if x.metadata.get("nbgrader", {}).get("grade_id") == c)]
    assert others and {r["status"] for r in others} == {"passed"}, [r for r in others if r["status"] != "passed"]


def cpu_cgroup_problem() -> str | None:
    """Why no CPU limit can be set on a kernel here (None if one can)."""
    folder, problem = cgroups.make_cpu_cgroup(f"ag-test-{os.getpid()}", 1)
    if folder is not None:
        cgroups.remove_cgroup(folder)
    elif problem is None:  # (cgroup v2: on the memory cgroup)
        memory, problem = cgroups.make_memory_cgroup(f"ag-test-{os.getpid()}", 64 * 2**20)
        if memory is not None:
            problem = cgroups.limit_cpu_v2(memory, 1)
            cgroups.remove_cgroup(memory)
    return problem


def busy_children_cpu(folder: str | None, children: int = 3, seconds: float = 2.0) -> float:
    """The CPU seconds `children` busy processes got in `seconds` of wall time, started by a process that joined
    the cgroup `folder` first (as the kernel's launcher joins the kernel's)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the 'kernel'
        try:
            if folder is not None:
                sandbox.join_cgroup(folder)
            pipes = []
            for _ in range(children):
                r, w = os.pipe()
                if os.fork() == 0:
                    end = time.monotonic() + seconds
                    while time.monotonic() < end:
                        pass
                    os.write(w, repr(time.process_time()).encode())
                    os._exit(0)
                os.close(w)
                pipes.append(r)
            os.write(write, repr(sum(float(os.read(r, 64)) for r in pipes)).encode())
        finally:
            os._exit(0)
    os.close(write)
    used = float(os.read(read, 64) or "nan")
    os.waitpid(pid, 0)
    return used


def test_a_kernels_processes_share_one_cpu_budget():
    # The quota on the cgroup the kernel manager makes for a kernel granted one thread (1.2 cores) holds all the
    # processes in it together: three busy children get 1.2 cores between them, not one core each.
    problem = cpu_cgroup_problem()
    if problem is not None:
        pytest.skip(f"no CPU limit can be set here ({problem}): the time limits still charge all processes' CPU")
    folder, _ = cgroups.make_cpu_cgroup(f"ag-test-budget-{os.getpid()}", 1)
    made_v2 = folder is None
    if made_v2:
        folder, _ = cgroups.make_memory_cgroup(f"ag-test-budget-{os.getpid()}", 2**30)
        assert cgroups.limit_cpu_v2(folder, 1) is None
    try:
        used = busy_children_cpu(folder)
    finally:
        cgroups.remove_cgroup(folder)
    assert used < 1.45 * 2.0, f"three busy children in a kernel's cgroup got {used:.2f} s of CPU in 2 s"


@pytest.mark.slow
@pytest.mark.sandbox
def test_no_kernel_cgroup_outlives_grading(limited):
    parent, _ = cgroups._own_memory_cgroup()
    if parent is None:
        pytest.skip("no memory cgroup here")
    assert len(limited["kernels"]) >= 3, f"the run's kernels were not seen: {limited['kernels']}"  # (not vacuous)
    assert limited["cgroups_left"] == [], "kernels' cgroups were left behind"
    cpu_parent = cgroups.cpu_cgroup_parent()
    if cpu_parent is not None:
        left = [name for name in limited["kernels"] if Path(cpu_parent, name).exists()]
        assert left == [], f"kernels' CPU cgroups were left behind: {left}"


def kernel_command(monkeypatch, made) -> tuple[list[str], object]:
    """The kernel command a SandboxKernelManager builds when make_memory_cgroup gives `made`, and the manager."""
    import asyncio

    from autograde.run.kernel_manager import SandboxKernelManager

    if made is not None:
        monkeypatch.setattr(cgroups, "make_memory_cgroup", lambda name, limit: made)
        monkeypatch.setattr(cgroups, "make_cpu_cgroup", lambda name, threads: (None, "no cpu controller here"))
    manager = SandboxKernelManager(kernel_name="python3")

    async def prepare():
        await manager._async_pre_start_kernel()
        return manager.format_kernel_cmd()

    return asyncio.run(prepare()), manager


def test_without_a_cgroup_the_kernel_starts_with_the_per_process_limit_and_the_log_says_so(monkeypatch, caplog):
    from autograde.run import kernel_manager

    monkeypatch.setitem(kernel_manager._said, "no cgroup", False)
    monkeypatch.setitem(kernel_manager._said, "no cpu cgroup", False)
    with caplog.at_level("WARNING", logger="autograde"):
        command, manager = kernel_command(monkeypatch, (None, "no memory controller here"))
    import asyncio

    asyncio.run(manager._async_cleanup_resources())
    assert "--cgroup" not in command and "--memory" in command, command
    said = [r.getMessage() for r in caplog.records]
    assert any("no memory controller here" in m and "not all of them together" in m for m in said), said
    assert any("no cpu controller here" in m and "no CPU limit" in m for m in said), said


def test_a_kernels_cgroup_is_made_for_it_and_removed_with_it(monkeypatch):
    problem = memory_cgroup_problem()
    if problem is not None:
        pytest.skip(f"no memory cgroup can be made on this machine ({problem})")
    import asyncio

    command, manager = kernel_command(monkeypatch, None)
    folder = command[command.index("--cgroup") + 1]
    assert os.path.isdir(folder) and os.path.basename(folder) == os.path.basename(manager._scratch)
    limit = next(Path(folder, f).read_text() for f in ("memory.max", "memory.limit_in_bytes")
                 if Path(folder, f).exists())
    assert int(limit) == manager.memory_mib * 2**20
    # The CPU budget: on the same cgroup (v2) or on one of the CPU hierarchy's of the same name (v1).
    folders = [command[i + 1] for i, part in enumerate(command) if part == "--cgroup"]
    quota = [Path(f, "cpu.max").read_text().split()[0] if Path(f, "cpu.max").exists() else
             Path(f, "cpu.cfs_quota_us").read_text() for f in folders
             if Path(f, "cpu.max").exists() or Path(f, "cpu.cfs_quota_us").exists()]
    if cpu_cgroup_problem() is None:
        assert [int(q) for q in quota] == [cgroups.cpu_quota(manager.threads)], (folders, quota)
        assert cgroups.cpu_quota(1) == 120_000  # 1.2 cores of 100 ms periods for one thread
    asyncio.run(manager._async_cleanup_resources())
    assert not any(os.path.exists(f) for f in folders), "the kernel's cgroups outlived it"


# Processes that keep forking while the grader empties their cgroup: a chain that forks and exits (one live
# process whose pid keeps changing) and a tree that keeps growing; each child does the same as its parent.
RUNAWAYS = {
    "fork_and_exit_chain": "import os\nwhile True:\n    if os.fork():\n        os._exit(0)\n",
    "growing_tree": "import os, time\nfor _ in range(5):\n    os.fork()\ntime.sleep(60)\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("code", RUNAWAYS.values(), ids=RUNAWAYS.keys())
def test_a_cgroup_is_emptied_and_removed_while_its_processes_fork(code):
    problem = memory_cgroup_problem()
    if problem is not None:
        pytest.skip(f"no cgroup can be made here ({problem})")
    folder, _ = cgroups.make_memory_cgroup(f"ag-test-runaway-{os.getpid()}", 256 * 2**20)
    procs = os.path.join(folder, "cgroup.procs")

    def join():
        with open(procs, "w") as f:
            f.write(str(os.getpid()))

    subprocess.Popen([sys.executable, "-c", code], preexec_fn=join, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while len(Path(procs).read_text().split()) < 2 and "chain" not in code and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        cgroups.remove_cgroup(folder)
        assert not os.path.isdir(folder), f"the cgroup was left with {Path(procs).read_text().split()}"
    finally:
        if os.path.isdir(folder):
            for pid in Path(procs).read_text().split():
                os.kill(int(pid), 9)
            cgroups.remove_cgroup(folder)
