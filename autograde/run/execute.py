"""How nbgrader executes a submission here: sandboxed kernels, tests in a checker, capped outputs, dead kernels survived.

nbgrader_config.py puts :class:`GuardedExecute` in place of nbgrader's
``Execute`` step (with :class:`autograde.run.kernel_manager.SandboxKernelManager`
behind it) and :class:`StderrIsNotFailure` after it, so both
``python -m autograde grade`` and nbgrader's own ``nbgrader autograde`` grade
this way.

What happened to a cell is recorded in that cell's metadata, as data
(:mod:`autograde.run.records`): ``cell.metadata["autograde"] = {"killed": {"last_words": ...},
"timed_out": {} (or, for a cell not run
because the notebook's time limit had passed, {"notebook_timeout": seconds}),
"cut_short": {"kept_chars": n}}`` (only the events that happened). The cell's
outputs still show the student what happened, and an error output makes
nbgrader score a test cell 0, but :mod:`autograde.results.classify` reads the record,
never the text.
"""
from __future__ import annotations

import copy
import functools
import secrets
import time
from pathlib import Path

from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from traitlets import Bool, Integer

from ..cells import CellKind, cell_kind
from ..course import CHECKED_OUTSIDE, checker_plan, configured, nbgrader_config
from . import sandbox
from .checker_process import CheckerFailed, checker_process
from .clock import CellClock, run_queue_wait  # noqa: F401 (this module's interface, as before; the clock itself: time_limits)
from .kernel_manager import SandboxKernelManager
from .records import (  # noqa: F401 (re-exported: what the execute step records is part of its interface)
    AGENT_NOT_STARTED,
    CHECKER_KEY,
    EVENTS_KEY,
    AgentNotStarted,
    CheckerBroke,
    Event,
    Failure,
    KernelStuck,
    error_output,
    events,
    failure_of,
    failures_recorded,
    no_verdict,
    note_failure,
    record,
)
from .time_limits import TimeLimits

__all__ = ["AgentNotStarted", "CHECKER_KEY", "CheckerBroke", "EVENTS_KEY", "Failure", "failures_recorded", "CellClock", "Event", "GuardedExecute", "SandboxKernelManager", "StderrIsNotFailure",
           "error_output", "events", "grading_settings", "no_verdict", "record", "run_queue_wait"]

# Each kernel's log (its end), beside the executed notebook; a notebook run again after its kernel died has several.
KERNEL_LOG = "kernel{suffix}.log"


@functools.cache
def _agent_source() -> str:
    here = Path(__file__).resolve().parent
    return "\n\n".join((here / name).read_text() for name in ("frames.py", "wire.py", "probes.py", "agent.py"))


def grading_settings(timeout: int | None = None, kernel: dict | None = None, overrides: dict | None = None) -> dict:
    """The limits grading runs under: nbgrader_config.py's, with `timeout`, `kernel` and `overrides` (what the
    instructor typed, by class, a parent class's value too) over them."""
    config = nbgrader_config(Path("."), timeout, kernel, overrides)
    settings = {"timeout": configured(config, GuardedExecute, "timeout"),
                "notebook_timeout": configured(config, GuardedExecute, "notebook_timeout")}
    for name in ("sandbox", "memory_mib", "file_size_mib", "max_processes", "disk_mib"):
        settings[name] = configured(config, SandboxKernelManager, name)
    return settings


def _is_test(cell) -> bool:
    """Whether `cell` is an autograded test cell (graded, and not an answer)."""
    return cell_kind(cell) == CellKind.TEST


class StderrIsNotFailure(NbGraderPreprocessor):
    """Relabel what test cells wrote to stderr as stdout, prefixed ``[stderr]``.

    nbgrader scores any test cell that wrote to stderr as failed, so a correct
    answer that prints a debug message or triggers a warning would lose its
    points. Exceptions still fail the cell; tests that must forbid warnings
    turn them into exceptions themselves.
    """

    def preprocess_cell(self, cell, resources, index):
        if cell_kind(cell) == CellKind.TEST:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "stream" and output.get("name") == "stderr":
                    output["name"] = "stdout"
                    output["text"] = "".join(f"[stderr] {line}" for line in output["text"].splitlines(keepends=True))
        return cell, resources


class GuardedExecute(TimeLimits, Execute):
    """nbgrader's Execute, hardened for hostile or broken submissions.

    - For a chapter of the course, a test cell runs in a checker process
      (:mod:`autograde.run.checker`), never in the student's kernel: the kernel
      runs only the notebook's answer and given cells, and an agent in it
      answers the checker's queries with data (:mod:`autograde.run.agent`).
      The cell's outcome is the checker's verdict, and its message is composed
      here from what the checker returned. A notebook of another assignment
      runs as nbgrader runs it, tests and all in the kernel.
    - A cell's output is cut at `max_output_chars` characters as it arrives,
      so a submission that prints gigabytes cannot exhaust the grader
      (event ``cut_short``). An error output is always kept (it fails the
      cell) but its message and traceback are cut to `max_output_chars / 5`
      characters each as they arrive.
    - When the kernel dies (``os._exit``, a segfault), the cell that killed it
      fails with ``KernelDied`` and the notebook runs again in a fresh kernel
      without that cell, so every other cell is graded as usual (event
      ``killed``, with the last lines of the dead kernel's log).
    - Cells interrupted at the time limit get the event ``timed_out``, recorded
      where the executor stops them (never read from an exception's name, which
      student code can choose): an answer cell that never finished may still
      have defined what its tests need, and that must not go unnoticed.
    - In a test cell, only the test's verdict scores: every ``execute_result``
      (which nbgrader would read as a grade, before any error) becomes a
      ``display_data`` that shows the same. Student code called by a test can
      print or display anything without changing the cell's points.
    - The agent starts in every kernel as soon as it is ready, also in the
      fresh kernel after one died.
    - A whole notebook gets `notebook_timeout` seconds: the cell running when
      they are up is interrupted, and the cells after it are not run (an error
      output, and the event ``timed_out`` with ``notebook_timeout``).
    - A cell's `timeout` counts the time it ran, less the time its kernel
      waited for a CPU other programs held (:class:`CellClock`): a busy
      machine does not make a correct answer run out of time. Whatever that
      count, a cell is stopped after `timeout_wall_factor` times its limit by
      the wall clock. The grader's own requests to the kernel (the agent's
      start) are timed the same way.
    """

    # nbclient's own (None or -1: no limit) with a floor: a course's cells always have a time limit.
    timeout = Integer(60, min=1, help="time limit of one cell in seconds: the time it ran, less the time its kernel "
                                      "waited for a CPU other programs held").tag(config=True)
    checker = Bool(True, help="run the test cells of the course's chapters in a checker process, outside the "
                              "student's kernel (False: in the kernel, as nbgrader does)").tag(config=True)
    notebook_timeout = Integer(600, min=0, help="wall-clock limit of a whole notebook in seconds (kernel starts and reruns "
                                         "after a dead kernel included): the cell running then is interrupted and "
                                         "the cells after it are not run, all counted as timed out; 0 for no limit"
                               ).tag(config=True)
    max_output_chars = Integer(100_000, min=1, help="characters of output kept per cell").tag(config=True)
    # Not a setting: the time limits' watchdog reads nbclient's mark that a cell's reply was read, which nbclient
    # writes (and clears, whatever a submission's metadata held, as the cell starts) only with record_timing.
    record_timing = Bool(True, help="nbclient's timing of each cell, always recorded here")
    agent_start_timeout = Integer(60, min=1, help="time limit in seconds of the grader's own requests in each kernel "
                                           "(its info, the agent's and checker's start, before any cell runs; "
                                           "counted as a cell's is, never cut short by the notebook's limit): not "
                                           "the students' cell limit, which a cold or busy machine could use up"
                                  ).tag(config=True)
    timeout_wall_factor = Integer(10, min=0, help="a cell is stopped after this many times its time limit (timeout) by "
                                           "the wall clock, however much of that it spent waiting for a busy "
                                           "machine's CPU (which the limit does not count); 0 for no such cap"
                                  ).tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxKernelManager)
        super().__init__(*args, **kwargs)

    def preprocess(self, nb, resources=None, km=None):
        try:
            return self._preprocess(nb, resources, km)
        except BaseException as error:
            note_failure(error)
            raise

    def _preprocess(self, nb, resources=None, km=None):
        original = copy.deepcopy(nb)
        assignment = ((resources or {}).get("nbgrader") or {}).get("assignment")
        # A chapter whose tests run in the checker: test cells never enter the kernel (autograde/run/checker.py).
        self._plan = checker_plan(assignment) if self.checker and assignment in CHECKED_OUTSIDE else None
        self._deadline = time.monotonic() + self.notebook_timeout if self.notebook_timeout > 0 else None
        self._killers: dict[int, str] = {}  # cell index -> the dead kernel's last words
        self._stuck: set[int] = set()  # cells whose kernel did not stop when interrupted at their limit
        self._stopped: set[int] = set()  # id() of the cells this run stopped at a time limit (never read from metadata)
        logs: list[str] = []  # each kernel's log, kept beside the executed notebook
        while True:
            self._current = None
            self._cut: set[int] = set()
            self._chars: dict[int, int] = {}
            self._manager = None
            attempt = copy.deepcopy(original)  # each attempt starts from the submission: no events of the last one
            try:
                nb, resources = super().preprocess(attempt, resources, km)
                logs.append(getattr(self._manager, "log_text", ""))
                break
            except DeadKernelError:
                logs.append(getattr(self._manager, "log_text", ""))
                if self._current is None or self._current in self._killers:
                    raise  # the kernel did not even start, or died outside any cell: nothing to skip
                # nbclient has cleaned the kernel up by now, and its manager kept the log's last lines.
                self._killers[self._current] = getattr(self._manager, "last_words", "")
                self.log.info("the kernel died in cell %d; running the notebook again without it", self._current)
            except KernelStuck:
                # nbclient's setup_kernel has shut that kernel down (killed, since it did not answer).
                logs.append(getattr(self._manager, "log_text", ""))
                if self._current is None or self._current in self._stuck:
                    raise
                if self._deadline is not None and time.monotonic() >= self._deadline:
                    # No time left to run it again: keep what ran (the cells before it keep their verdicts), the
                    # stuck cell and those after it are not run at the notebook's limit.
                    nb = self._keep_past_deadline(attempt, self._current)
                    break
                self._stuck.add(self._current)
                self.log.info("cell %d did not stop when interrupted; running the notebook again without it",
                              self._current)
        if resources is not None:  # nbgrader writes these files beside the executed notebook (autograded/<s>/<a>/)
            for number, text in enumerate(logs, 1):
                resources.setdefault("outputs", {})[KERNEL_LOG.format(suffix="" if number == 1 else f"-{number}")] = \
                    text.encode()
        return nb, resources

    def _keep_past_deadline(self, attempt, stuck: int):
        """`attempt` as it ran up to cell `stuck`, which did not stop when the notebook's time ran out: that cell and
        every later one are marked as stopped or not run at the notebook's limit."""
        for index, cell in enumerate(attempt.cells):
            if index == stuck:
                cell.outputs = [error_output("TimeoutError", f"the notebook's time limit ({self.notebook_timeout} s) "
                                                             "ran out while this cell ran, and it did not stop when "
                                                             "interrupted; its kernel was stopped")]
                record(cell, Event.TIMED_OUT, notebook_timeout=self.notebook_timeout, stuck=True)
            elif index > stuck:
                self._past_notebook_timeout(cell)
        return attempt

    def create_kernel_manager(self):
        """nbclient's kernel manager, kept: after the kernel died, it holds the kernel's last words."""
        self._manager = super().create_kernel_manager()
        return self._manager

    def start_new_kernel_client(self):
        """nbclient's kernel client, with the agent started in the kernel before any cell runs (every kernel)."""
        kc = super().start_new_kernel_client()
        if getattr(self, "_plan", None) is not None:
            try:
                self._start_agent()
            except BaseException:
                # nbclient cleans a kernel up only once this returned: its process, scratch folder and cgroup go now.
                try:
                    self._cleanup_kernel()
                except Exception:  # (the agent's failure is what the caller must see)
                    self.log.exception("could not clean up the kernel whose agent did not start")
                raise
        return kc

    def preprocess_cell(self, cell, resources, index):
        cell, resources = self._preprocess_cell(cell, resources, index)
        if cell.cell_type == "code" and _is_test(cell):
            no_verdict(cell)
        return cell, resources

    def _preprocess_cell(self, cell, resources, index):
        if index in self._killers:
            # The error output is what nbgrader scores (a test cell with an error gets 0) and what the student sees.
            cell.outputs = [error_output("KernelDied", "the kernel died while running this cell (os._exit, a crash "
                                                       "or running out of memory); the rest was graded without it")]
            record(cell, Event.KILLED, last_words=self._killers[index])
            return cell, resources
        if index in self._stuck:
            cell.outputs = [error_output("TimeoutError", "this cell ran past its time limit and did not stop when "
                                                         "interrupted; its kernel was stopped and the rest of the "
                                                         "notebook was graded without this cell")]
            record(cell, Event.TIMED_OUT, stuck=True)
            return cell, resources
        if self._past_notebook_timeout(cell):
            return cell, resources
        if self._plan is None or cell.cell_type != "code":
            return self._run(cell, resources, index)
        return self._with_checker(cell, resources, index)

    def _run(self, cell, resources, index):
        self._current = index
        cell, resources = super().preprocess_cell(cell, resources, index)
        self._current = None
        return cell, resources

    def _start_in_kernel(self, code: str) -> None:
        """Run the grader's own start-up `code` in a new kernel, silently, before any cell (timed as the grader's)."""
        reply = self.wait_for_reply(self.kc.execute(code, silent=True, store_history=False), None)
        if (reply or {}).get("content", {}).get("status") != "ok":
            content = (reply or {}).get("content", {})
            raise AgentNotStarted(f"{AGENT_NOT_STARTED}: {content.get('ename')}: {content.get('evalue')}")

    # --- The checker: test cells run outside the kernel, which only answers their queries. ---

    def _start_agent(self) -> None:
        """Start the agent in a new kernel (before any cell) and a fresh namespace for this notebook's tests."""
        plan, names = self._plan
        self._entry = f"_ag_{secrets.token_hex(8)}"
        inside = (sandbox.KERNEL_IPC if getattr(self.km, "bubblewrapped", False) else self.km.ip) + "-agent"
        outside = self.km.ip + "-agent"
        code = (f"(lambda g: (exec(compile({_agent_source()!r}, 'autograde_agent', 'exec'), g), "
                f"g['install']({inside!r}, {self._entry!r})))"
                "({'__builtins__': __import__('builtins'), '__name__': 'autograde_agent', 'get_ipython': get_ipython})\n")
        self._start_in_kernel(code)
        pid = self.km.kernel_pid() if hasattr(self.km, "kernel_pid") else None
        self._checker = checker_process(max(int(getattr(self.km, "threads", 1) or 1), 1))
        try:
            answer = self._checker.call("start", sorted(names), outside, getattr(self.km, "_cgroup", None), pid,
                                        timeout=self.agent_start_timeout)
        except CheckerFailed as e:  # (a starved machine: the checker's start is the grader's, as the agent's is)
            raise AgentNotStarted(f"{AGENT_NOT_STARTED}: the checker: {e}") from None
        if answer.get("status") != "ok":
            raise AgentNotStarted(f"{AGENT_NOT_STARTED}: the checker: {answer.get('why')}")

    def _with_checker(self, cell, resources, index):
        """Run a code cell where it belongs: an answer in the kernel; a given cell in the kernel and, unless it uses
        the student's answers, in the checker too; a test cell in the checker, the kernel answering its queries."""
        plan, _ = self._plan
        kind, source = plan.get(cell.metadata.get("nbgrader", {}).get("grade_id"), ("", None))
        if kind != "test":
            cell, resources = self._run(cell, resources, index)
            if kind == "given":
                answer = self._checker.call("given", source)
                if answer.get("status") != "ok":
                    self.log.warning("a given cell failed in the checker: %s: %s", answer.get("ename"),
                                     answer.get("evalue"))
            return cell, resources
        shown = cell.source
        cell.source = f"{self._entry}()"  # all the kernel runs of a test cell: the agent, serving the checker
        self._checker.begin("test", source, None)
        try:
            cell, resources = self._run(cell, resources, index)
        finally:
            cell.source = shown
        try:
            answer = self._checker.finish()
        except CheckerFailed as e:
            raise CheckerBroke(f"the grader's checker failed on cell {index}: {e}") from None
        # How many round trips the test cell made to the kernel (what a test's calls cost; never read for a grade).
        cell.setdefault("metadata", {})[CHECKER_KEY] = {"exchanges": int(answer.get("exchanges") or 0)}
        if id(cell) not in self._stopped:  # (stopped at a time limit: the timeout is the cell's outcome)
            self._checker_outputs(cell, answer)
        return cell, resources

    def _checker_outputs(self, cell, answer: dict) -> None:
        """The outputs of a test cell run in the checker, composed from what it returned (never its text)."""
        if answer.get("stdout"):
            cell.outputs.append(NotebookNode(output_type="stream", name="stdout", text=answer["stdout"]))
        if any(o.get("output_type") == "error" for o in cell.outputs):
            return  # the kernel's own error (its agent replaced or broken by student code): it fails the cell
        status = answer.get("status")
        count = cell.get("execution_count")
        if status == "ok":
            return
        if status == "gone":
            cell.outputs.append(error_output("KernelStoppedAnswering", "the notebook's kernel stopped answering the "
                                             f"test ({answer.get('why')}); did your code replace or break the grader's "
                                             "agent?"))
            cell.outputs[-1]["traceback"].append('File "<your code>":1')
        elif status == "error" and answer.get("student"):
            # The student's exception: every frame in a cell of the notebook, and (whatever they are) a frame of
            # the student's code, so that its message is shown as theirs (one line), never as the test's verdict.
            output = error_output(answer.get("ename") or "Exception", answer.get("evalue") or "")
            output["traceback"].append('File "<your code>":1')
            output["traceback"] += [f"Cell In[{c}], line {line}, in {function}" for c, line, function in
                                    answer.get("frames") or []]
            cell.outputs.append(output)
        elif status == "error":
            output = error_output(answer.get("ename") or "Exception", answer.get("evalue") or "")
            output["traceback"].insert(0, f"Cell In[{count}], line {answer.get('line', 1)}")
            cell.outputs.append(output)
        else:
            raise CheckerBroke(f"the grader's checker failed: {answer.get('why')}")

    def output(self, outs, msg, display_id, cell_index):
        if msg["msg_type"] == "error":  # an error is always kept, as it decides the score, but cut to size
            content = msg.get("content", {})
            half = max(self.max_output_chars // 5, 1)
            if len(str(content.get("evalue", ""))) > half:
                content["evalue"] = str(content["evalue"])[:half] + "... [cut by the grader]"
            lines, kept = [], 0
            for line in content.get("traceback", []) or []:
                line = str(line)[: max(half - kept, 0)]
                kept += len(line)
                lines.append(line)
                if kept >= half:
                    lines.append("... [traceback cut by the grader]")
                    break
            content["traceback"] = lines
            content["ename"] = str(content.get("ename", ""))[:200]
        else:
            if cell_index in self._cut:
                return None
            content = msg.get("content", {})
            size = len(content.get("text", "")) + sum(len(str(v)) for v in content.get("data", {}).values())
            self._chars[cell_index] = self._chars.get(cell_index, 0) + size
            if self._chars[cell_index] > self.max_output_chars:
                self._cut.add(cell_index)
                record(self.nb.cells[cell_index], Event.CUT_SHORT, kept_chars=self.max_output_chars)
                outs.append(NotebookNode(output_type="stream", name="stdout",
                                         text=f"\n[output cut at {self.max_output_chars:,} characters by the grader]\n"))
                return None
        return super().output(outs, msg, display_id, cell_index)
