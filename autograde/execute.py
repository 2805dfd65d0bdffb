"""How nbgrader executes a submission here: sandboxed kernels, guarded tests, capped outputs, dead kernels survived.

nbgrader_config.py puts :class:`GuardedExecute` in place of nbgrader's
``Execute`` step and :class:`SandboxKernelManager` behind it, so both
``python -m autograde grade`` and nbgrader's own ``nbgrader autograde`` grade
this way.
"""
from __future__ import annotations

import ast
import asyncio
import copy
import os
import shutil
import sys
import tempfile
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Bool, Integer, Unicode

from . import sandbox

GUARD_SOURCE = (Path(__file__).resolve().parent / "kernel_guard.py").read_text()
GUARD = "_autograde_guard"  # the guard's module name inside the kernel


class SandboxKernelManager(AsyncKernelManager):
    """Starts each kernel through :mod:`autograde.sandbox`: its own scratch folder, limits, and bubblewrap.

    The connection file and the kernel's log live in a fresh folder per
    kernel, removed when the kernel is cleaned up. In the sandbox, the kernel's
    Unix sockets (IPC transport: the sandbox has no network) lie in its own
    size-limited /tmp, reached through ``/proc/<pid>/root`` of the sandbox.
    """

    sandbox = Bool(True, help="run kernels in a bubblewrap sandbox (else only the memory and file-size limits apply)"
                   ).tag(config=True)
    memory_mib = Integer(4096, help="address-space limit of a kernel in MiB").tag(config=True)
    file_size_mib = Integer(512, help="largest file a kernel may write, in MiB").tag(config=True)
    max_processes = Integer(128, help="processes (and threads) a kernel may start beyond its NumPy and PyTorch "
                                      "thread pools; 0 for no limit (sandbox only)").tag(config=True)
    disk_mib = Integer(512, help="size in MiB of the sandbox's /tmp, which holds the kernel's home and working "
                                 "folder and is the only place it may write; 0 for no limit (sandbox only)"
                       ).tag(config=True)
    threads = Integer(1, help="threads a kernel's NumPy and PyTorch may use").tag(config=True)
    scratch_base = Unicode("", help="folder for the kernels' scratch folders (default: the system's temp folder); "
                                    "keep its path short, Unix socket paths are limited to 107 bytes").tag(config=True)
    last_words = Unicode("", help="the last lines the kernel wrote to its log, kept when it is cleaned up")

    async def _async_pre_start_kernel(self, **kw):
        # The worker's pid in the name: when a worker is lost, the grader removes its kernels' folders.
        self._scratch = tempfile.mkdtemp(prefix=f"ag-{os.getpid()}-", dir=self.scratch_base or None)
        self.transport = "ipc"
        self.connection_file = os.path.join(self._scratch, "kernel.json")
        self.ip = sandbox.KERNEL_IPC if self.sandbox else os.path.join(self._scratch, "ipc")
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
        return launcher + ([] if self.sandbox else ["--no-sandbox"]) + ["--"] + command

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        await super()._async_launch_kernel(kernel_cmd, **kw)
        if self.sandbox:  # the client connects to the sockets inside the sandbox, before the control socket opens
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
        if not self.sandbox:
            super().cleanup_ipc_files()

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart)
        if not restart and getattr(self, "_scratch", None):
            self.last_words = log_tail(Path(self._scratch) / "kernel.log")
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None  # nbclient cleans up twice (in shutdown_kernel and after it): keep what was read

    # The base class binds this name to its own method, which nbclient calls after a kernel died.
    cleanup_resources = _async_cleanup_resources


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


def remove_scratch_of(pid: int) -> None:
    """Remove the scratch folders of the kernels a (lost) worker process `pid` started in the system's temp folder."""
    for folder in Path(tempfile.gettempdir()).glob(f"ag-{pid}-*"):
        shutil.rmtree(folder, ignore_errors=True)


def defined_names(source: str) -> list[str]:
    """Global names that `source` binds outside function bodies (assignments, loops, with, defs, classes, imports)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names: list[str] = []

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
            return  # names inside are local to it
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.extend((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.append(node.name)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return sorted(set(names))


def free_names(source: str) -> set[str]:
    """Names that `source` reads but never binds itself: what it needs from earlier cells.

    A test cell's free names are what the guard protects: a given helper that
    no test reads (a tool for the student, such as a provided ``softmax``) is
    the student's to redefine.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    loaded, stored = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else stored).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stored.add(node.name)
        elif isinstance(node, ast.arg):
            stored.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            stored.update((a.asname or a.name).split(".")[0] for a in node.names)
    return loaded - stored


def imported_packages(sources: list[str]) -> list[str]:
    """Top-level packages that `sources` import, sorted."""
    found = set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return sorted(found)


def error_output(name: str, message: str) -> NotebookNode:
    """A notebook error output, as a failed cell shows it."""
    return NotebookNode(output_type="error", ename=name, evalue=message, traceback=[f"{name}: {message}"])


class GuardedExecute(Execute):
    """nbgrader's Execute, hardened for hostile or broken submissions.

    - Before the first cell the kernel records the functions tests rely on
      (:mod:`autograde.kernel_guard`); before each test cell they are put back,
      and a test cell during which student code changed them fails with
      ``TamperingError``. Changes found before a test cell are listed in the
      notebook's metadata (``autograde.restored``).
    - A cell's output is cut at `max_output_chars` characters as it arrives,
      so a submission that prints gigabytes cannot exhaust the grader.
    - When the kernel dies (``os._exit``, a segfault), the cell that killed it
      fails with ``KernelDied`` and the notebook runs again in a fresh kernel
      without that cell, so every other cell is graded as usual. The last lines
      of the dead kernel's log are kept (``autograde.last_words``).
    - Cells interrupted at the time limit are listed (``autograde.timed_out``):
      an answer cell that never finished may still have defined what its tests
      need, and that must not go unnoticed.
    """

    guard = Bool(True, help="guard test cells against monkeypatching").tag(config=True)
    max_output_chars = Integer(100_000, help="characters of output kept per cell").tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxKernelManager)
        super().__init__(*args, **kwargs)

    def preprocess(self, nb, resources=None, km=None):
        original = copy.deepcopy(nb)
        self._killers: dict[int, str] = {}  # cell index -> the dead kernel's last words
        while True:
            self._restored: list[str] = []
            self._timed_out: list[int] = []
            self._current = None
            self._cut: set[int] = set()
            self._chars: dict[int, int] = {}
            attempt = copy.deepcopy(original)
            try:
                nb, resources = super().preprocess(attempt, resources, km)
                break
            except DeadKernelError:
                if self._current is None or self._current in self._killers:
                    raise  # the kernel did not even start, or died outside any cell: nothing to skip
                # nbclient has cleaned the kernel up by now, and its manager kept the log's last lines.
                self._killers[self._current] = getattr(self._manager, "last_words", "")
        if self._restored or self._killers or self._timed_out:
            meta = nb.metadata.setdefault("autograde", {})
            meta["restored"] = sorted(set(self._restored))
            meta["kernel_died_in"] = sorted(self._killers)
            meta["last_words"] = {str(index): words for index, words in self._killers.items() if words}
            meta["timed_out"] = sorted(set(self._timed_out))
        return nb, resources

    def create_kernel_manager(self):
        """nbclient's kernel manager, kept: after the kernel died, it holds the kernel's last words."""
        self._manager = super().create_kernel_manager()
        return self._manager

    def preprocess_cell(self, cell, resources, index):
        if index in self._killers:
            cell.outputs = [error_output("KernelDied", "the kernel died while running this cell (os._exit, a crash "
                                                       "or running out of memory); the rest was graded without it")]
            return cell, resources
        if self.guard and index == 0:
            self._start_guard()
        if not self.guard or cell.cell_type != "code":
            return self._run(cell, resources, index)
        nbgrader = cell.metadata.get("nbgrader", {})
        is_test = bool(nbgrader.get("grade") and not nbgrader.get("solution"))
        provided = bool(nbgrader and not nbgrader.get("solution"))
        if is_test and self._dirty:  # student code ran since the last check
            self._restored += self._guard_check()
        # What a given or test cell defines is recorded (and after a test, checked) in the same request as the
        # cell itself, as its user_expressions: no extra round trip to the kernel.
        names = [n for n in defined_names(cell.source) if n in self._test_reads]
        expression = f"after_test({names!r})" if is_test else f"remember({names!r})" if provided else None
        self._expressions = {"r": f"__import__('sys').modules[{GUARD!r}].{expression}"} if expression else None
        self._last_reply = None
        try:
            cell, resources = self._run(cell, resources, index)
        finally:
            self._expressions = None
        self._dirty = not is_test
        if expression is not None:
            result = self._expression_result(self._last_reply)
            if result is None:  # the kernel skips user_expressions when the cell raised
                result = self._guard_call(expression)
            if is_test and result:
                cell.outputs.append(error_output(
                    "TamperingError", "while this test ran, the code under test changed what the test relies on: "
                    + "; ".join(result[:5]) + ". The test does not count."))
        return cell, resources

    def _run(self, cell, resources, index):
        self._current = index
        cell, resources = super().preprocess_cell(cell, resources, index)
        self._current = None
        return cell, resources

    def on_cell_executed(self, **kwargs):
        self._last_reply = kwargs.get("execute_reply")
        if (self._last_reply or {}).get("content", {}).get("ename") == self.error_on_timeout.get("ename"):
            self._timed_out.append(kwargs["cell_index"])
        return super().on_cell_executed(**kwargs)

    @staticmethod
    def _expression_result(reply):
        """The guard's answer in an execute reply's user_expressions, or None if it was not evaluated."""
        result = (reply or {}).get("content", {}).get("user_expressions", {}).get("r")
        if not result:
            return None
        if result.get("status") != "ok":
            return [f"the grader's guard could not run ({result.get('ename')}: {result.get('evalue')})"]
        return ast.literal_eval(result["data"]["text/plain"])

    # Explicit guard calls are silent executions: no output, no history, the result through user_expressions.
    def _guard_call(self, expression: str):
        reply = self.wait_for_reply(self.kc.execute(
            "", silent=True, store_history=False,
            user_expressions={"r": f"__import__('sys').modules[{GUARD!r}].{expression}"}), None)
        result = self._expression_result(reply)
        return result if result is not None else ["the grader's guard did not answer"]

    def _guard_check(self) -> list[str]:
        return self._guard_call("check()") or []

    def _start_guard(self) -> None:
        packages = imported_packages([c.source for c in self.nb.cells if c.cell_type == "code"
                                      and not c.metadata.get("nbgrader", {}).get("solution")])
        tests = [c.source for c in self.nb.cells if c.cell_type == "code"
                 and c.metadata.get("nbgrader", {}).get("grade") and not c.metadata.get("nbgrader", {}).get("solution")]
        self._test_reads = set().union(*map(free_names, tests)) if tests else set()
        code = (f"import sys as _s, types as _t\n_m = _t.ModuleType({GUARD!r})\n_m.get_ipython = get_ipython\n"
                f"exec(compile({GUARD_SOURCE!r}, 'autograde_guard', 'exec'), _m.__dict__)\n"
                f"_s.modules[{GUARD!r}] = _m\n_m.snapshot({packages!r})\ndel _s, _t, _m\n")
        reply = self.wait_for_reply(self.kc.execute(code, silent=True, store_history=False), None)
        if (reply or {}).get("content", {}).get("status") != "ok":
            content = (reply or {}).get("content", {})
            raise RuntimeError(f"the grader's guard failed to start: {content.get('ename')}: {content.get('evalue')}")
        self._dirty = False
        self._expressions = None
        execute = self.kc.execute

        def execute_with_guard(code, *args, **kwargs):
            if self._expressions:
                kwargs.setdefault("user_expressions", self._expressions)
            return execute(code, *args, **kwargs)

        self.kc.execute = execute_with_guard

    def output(self, outs, msg, display_id, cell_index):
        if msg["msg_type"] != "error":  # errors are always kept: they decide the score
            if cell_index in self._cut:
                return None
            content = msg.get("content", {})
            size = len(content.get("text", "")) + sum(len(str(v)) for v in content.get("data", {}).values())
            self._chars[cell_index] = self._chars.get(cell_index, 0) + size
            if self._chars[cell_index] > self.max_output_chars:
                self._cut.add(cell_index)
                outs.append(NotebookNode(output_type="stream", name="stdout",
                                         text=f"\n[output cut at {self.max_output_chars:,} characters by the grader]\n"))
                return None
        return super().output(outs, msg, display_id, cell_index)
