"""The checker: a notebook's test cells run here, outside the student's kernel, which they query for data only.

One checker process per grading worker, started when first needed and kept
warm (NumPy and PyTorch imported once). It never runs student code, and the
sandbox cannot reach its memory or files. For each notebook it keeps a
namespace of its own, in which it runs the notebook's given cells that do not
use the student's answers (the tests' helpers, their data) and the test cells,
hidden lines included. The names the student's answers define are looked up in
the kernel at the start of each test cell (:mod:`autograde.run.agent`): data
comes back as data (arrays, tensors, numbers, strings, lists), anything else
as a proxy whose calls and attributes are forwarded (:mod:`autograde.run.wire`).
A student's ``max = ...`` or a helper named like a test's variable stays in
the kernel; no test, expected value or oracle ever enters it, except an
oracle lent on purpose as a function that answers with data
(``retry_with_reference``: a correct earlier function for one retry).

What a test cell did is returned as data: passed, or the test's own verdict
(its exception's type and message, and its line), or the student's exception
(type name, one line, the frame in their cell), or "the kernel stopped
answering" (interrupted at a time limit, dead, or its agent broken).
:class:`autograde.run.execute.GuardedExecute` turns that into the cell's
outputs, which nbgrader scores as before.

Helpers of the notebooks' that are the checker's own (a cell's definition of
one is skipped): ``retry_with_reference`` (it lends the references to the
kernel's namespace, where the student's functions look them up),
``_rerun_answer_with_references`` (chapter 1: it runs an answer cell again in
the kernel with correct earlier functions) and ``peak_memory_of`` (it
measures the kernel's memory as the operating system counts it: the peak of
its memory cgroup, else of its process, never a counter in the student's
process), and the probes ``gradients_of``, ``saved_by``, ``gradcheck_of``,
``largest_operation_of``, ``left_alive_by`` and ``held_by`` (:mod:`autograde.run.probes`:
autograd through the student's function runs in the kernel, where its graph
is, and what it measured comes back as data).
"""
from __future__ import annotations

import ast
import builtins
import contextlib
import io
import logging
import os
import select
import socket
import sys
import tempfile
import time
import traceback
import warnings
from multiprocessing.connection import Connection

from .lent import LentModules
from .memory import MemoryProbe
from .probes import PROBES
from .wire import Closed, Endpoint, Proxy, RemoteError, WireError, one_line

log = logging.getLogger(__name__)

TEST_MESSAGE_CHARS = 20_000  # of a test's own message, kept whole below this
OUTPUT_CHARS = 100_000  # of what a test cell prints in the checker
CONNECT_SECONDS = 10.0  # to reach the kernel's agent, whose socket exists before any cell runs


class CheckerSide(LentModules, Endpoint):
    """The checker's end: its own objects are lent to the kernel as handles; warnings the student's code raised
    are raised again here, where the test's ``recorded_warnings()`` catches them."""

    def __init__(self, control: Connection | None = None):
        super().__init__("$lent", "$handle")
        self.mirrors = {}  # the notebook's given classes, which the kernel defines alike (isinstance works on them)
        self.synced: dict = {}  # id of a lent module's parameter -> its version when the kernel last had its values
        self.parameters: dict = {}  # handle of a student's parameter -> its linked parameter here
        self.graphs: dict = {}  # forwards of lent modules kept for their backward, by number
        self.graph_count = 0
        self.control = control  # the grader's connection: an "abort" on it ends a wait for the kernel

    def serve_until_reply(self):
        try:
            return super().serve_until_reply()
        except WireError as e:  # a reply that is not the agent's: the kernel's side is broken
            raise Closed(f"the kernel answered with something that is not data ({e})") from None

    def wait(self) -> None:
        """Wait until the kernel sends something; the grader's "abort" (the kernel's cell ended, or was stopped,
        while this still waited: its agent does not answer) ends the wait instead."""
        if self.control is None:
            return
        readable, _, _ = select.select([self.conn, self.control], [], [])
        if self.conn not in readable:
            self.control.recv()
            raise Closed("the kernel's cell ended without answering the test")

    def _handle(self, obj):
        # What the kernel learns of a lent object's type: the libraries' classes (a mirror needs to know a module),
        # never the names of the tests' own classes (`_CorrectBlock`), which are the checker's business.
        node = super()._handle(obj)
        if isinstance(node.get("types"), list):
            node["types"] = [t for t in node["types"] if not t.startswith("__main__.")]
        return node

    # The checker's modules lent to the kernel (a correct earlier exercise's): the kernel mirrors them and asks
    # for their layout, their forward with its parameters' values, and the gradients of a forward it kept.
    def perform(self, message: dict, blobs):
        op = message.get("op")
        # The kernel may call what the checker lends it and read its public attributes; it may not change the
        # checker's objects (an oracle whose forward the student's code replaced would grade itself) nor look
        # into them (a lent function's __globals__ is the tests' namespace).
        if op in ("setattr", "setitem", "assign") or (
                op == "getattr" and str(self.unpack(message.get("name"), blobs)).startswith("_")):
            raise PermissionError("the grader's objects can be called and read, not changed or looked into")
        if op not in ("layout", "lent_forward", "lent_backward"):
            return super().perform(message, blobs)
        module = self._resolve({self.export: message.get("target")})
        field = lambda key: self.unpack(message.get(key), blobs)  # noqa: E731
        if op == "layout":
            for p in module._parameters.values():
                if p is not None:
                    self.synced[id(p)] = p._version
            return {"params": [[n, p] for n, p in module._parameters.items() if p is not None],
                    "children": [[n, c] for n, c in module._modules.items() if c is not None],
                    "training": module.training}
        if op == "lent_forward":
            return self._lent_forward(module, field)
        return self._lent_backward(field)

    def warned(self, warned: list) -> None:
        for entry in warned[:20]:
            if not (isinstance(entry, list) and len(entry) == 2):
                continue
            category = getattr(builtins, str(entry[0]), None)
            if not (isinstance(category, type) and issubclass(category, Warning)):
                category = UserWarning
            warnings.warn_explicit(one_line(entry[1]), category, "<your code>", 0)


def _mentioned(source: str) -> set[str] | None:
    """Every name `source` mentions (loaded or stored), None if it reads ``globals()`` (it may read any)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return None if "globals" in names or "vars" in names else names


_FOLDER: dict = {}  # the folder of the current notebook's cells, as files (one notebook at a time per process)


class NotebookChecker:
    """The checker's state for one notebook (one kernel): the tests' namespace and the connection to the agent."""

    def __init__(self, proxied: list[str], agent_path: str, cgroup: str | None = None, pid: int | None = None,
                 control: Connection | None = None):
        self.proxied = sorted(set(proxied))
        self.agent_path, self.cgroup, self.pid = agent_path, cgroup, pid
        self.side = CheckerSide(control)
        self.ns = {"__name__": "__main__", "__builtins__": builtins}
        self.ns.update({name: self._probe(method) if method in PROBES else getattr(self, method)
                        for name, method in self.OVERRIDES.items()})
        self.ns.update({helper: self._name_is(name) for helper, name in self.RENAMERS.items()})
        self._tried: set = set()
        self._cells = 0
        last = _FOLDER.pop(0, None)  # the last notebook's cells
        if last is not None:
            last.cleanup()
        _FOLDER[0] = tempfile.TemporaryDirectory(prefix="autograde-checker-")
        self.folder = _FOLDER[0].name

    # The helpers of the notebook's that must act on the kernel, replaced after the given cell defining them.
    def _retry_with_reference(self, check, references):
        """Run `check()`; if it fails, run it again with `references` in place of the student's functions of those
        names, in the kernel's namespace, where their code looks them up."""
        try:
            check()
            return
        except Exception as error:  # not BaseException: the kernel's going away must still end the cell
            first = error
        if not references:
            raise first
        previous = self.side.request("set_globals", None, values=dict(references))
        missing = object()
        saved = {name: self.ns.get(name, missing) for name in references}
        self.ns.update(references)
        try:
            check()
            passed = True
        except Exception:
            passed = False
        finally:
            self.side.request("set_globals", None, values=previous)
            for name, value in saved.items():
                if value is missing:
                    self.ns.pop(name, None)
                else:
                    self.ns[name] = value
        if not passed:
            raise first
        print(f"Passed with a correct {' and '.join(references)} in place of yours: your answer here is right, "
              f"and the mistake ({getattr(first, 'type_name', type(first).__name__)}: {one_line(first)}) "
              "lies in that earlier exercise.")

    def _peak_memory_of(self, call):
        """(call(), the bytes of memory the kernel's processes took at the peak during it, beyond the arguments
        sent to it)."""
        sent = self.side.sent_bytes
        with MemoryProbe(self.cgroup, self.pid) as probe:
            result = call()
        if probe.growth is None:
            raise RuntimeError("the grader could not measure the kernel's memory on this machine")
        return result, max(probe.growth - (self.side.sent_bytes - sent), 0)

    def _rerun_answer_with_references(self, names, references, probe):
        """If the answer cell defining `names` stopped before it did and `probe()` says an earlier function of the
        student's is wrong, run that cell again in the kernel with `references` in their place; what it then
        defines is graded (chapter 1's tests of the exercises that use the earlier functions)."""
        missing = [name for name in names if name not in self.ns]
        if not missing or tuple(names) in self._tried:
            return
        self._tried.add(tuple(names))
        try:
            earlier_is_wrong = probe()
        except Exception:
            earlier_is_wrong = True
        if not earlier_is_wrong:
            return  # the earlier functions are right: the answer cell stopped for a reason of its own
        answer = self.side.request("rerun_answer", None, missing=missing, references=dict(references))
        found = [name for name in answer.get("found", []) if name in missing]
        values = self.side.request("lookup", None, names=found) if found else {}
        self.ns.update({name: values[name] for name in found if name in values})
        if answer.get("ran") and found:
            print(f"Your answer cell stopped before defining {', '.join(missing)}. Run again with a correct "
                  f"{', '.join(references)} in place of yours, it defined them, and that is what is graded here: the "
                  "mistake lies in an earlier exercise, which costs its points there.")

    def _probe(self, name: str):
        """The notebook's helper for probe `name` (:mod:`autograde.run.probes`): on the student's object it runs in
        the kernel, where the object's autograd graph is, and its results come back as data; on one of the
        checker's own (a reference), here."""
        def probe(target, *args, **kwargs):
            if isinstance(target, Proxy):
                return self.side.request("probe", object.__getattribute__(target, "_id"), name=name, args=args,
                                         kwargs=kwargs)
            return PROBES[name](target, *args, **kwargs)

        return probe

    def _name_is(self, name: str):
        """The notebook's helper that makes `name` mean another object within a with-statement (``patchify_is``,
        ``_transformer_block_is``): in the kernel, where the student's code looks the name up, and here."""
        @contextlib.contextmanager
        def means(value):
            previous = self.side.request("set_globals", None, values={name: value})
            missing = object()
            saved = self.ns.get(name, missing)
            self.ns[name] = value
            try:
                yield
            finally:
                self.side.request("set_globals", None, values=previous)
                if saved is missing:
                    self.ns.pop(name, None)
                else:
                    self.ns[name] = saved

        return means

    RENAMERS = {"patchify_is": "patchify", "_transformer_block_is": "TransformerBlock"}

    OVERRIDES = {"retry_with_reference": "_retry_with_reference", "peak_memory_of": "_peak_memory_of",
                 "_rerun_answer_with_references": "_rerun_answer_with_references", "gradients_of": "gradients",
                 "saved_by": "saved_by", "gradcheck_of": "gradcheck_of", "largest_operation_of": "largest_operation",
                 "left_alive_by": "left_alive", "held_by": "held_by"}

    def _compile(self, source: str, name: str):
        """`source` compiled, less its top-level definitions of the helpers the checker replaces (its own stand in,
        bound from the start: a cell that defines one and calls it at once calls the checker's), as a file `name`
        in this notebook's folder. A file that exists, because libraries look for the source of every frame of a
        traceback (hypothesis, for each failing example: ``inspect.getsourcefile``), and for a name that is no
        file they search every loaded module, about 20 ms each time."""
        filename = os.path.join(self.folder, name)
        with open(filename, "w") as f:
            f.write(source)
        tree = ast.parse(source, filename)
        tree.body = [node for node in tree.body
                     if not (isinstance(node, ast.FunctionDef) and (node.name in self.OVERRIDES or
                                                                node.name in self.RENAMERS))]
        return compile(tree, filename, "exec")

    def given(self, source: str) -> dict:
        """Run a given cell (the tests' helpers and data) in the tests' namespace."""
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                self._cells += 1
                exec(self._compile(source, f"given_cell_{self._cells}.py"), self.ns)
        except BaseException as e:  # the grader's own cell failed here: said, and the tests that need it fail
            return {"status": "error", "ename": type(e).__name__, "evalue": one_line(e)}
        finally:
            self.side.sync_random = "torch" in sys.modules and any(
                v is sys.modules["torch"] for v in self.ns.values())
            self.side.mirrors.update({f"__main__.{v.__qualname__}": v for v in self.ns.values()
                                      if isinstance(v, type) and v.__module__ == "__main__"})
        return {"status": "ok"}

    def _connect(self) -> socket.socket:
        deadline = time.monotonic() + CONNECT_SECONDS
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(self.agent_path)
                return sock
            except OSError as e:
                sock.close()
                control = self.side.control
                if time.monotonic() > deadline or (control is not None and control.poll(0.01)):
                    raise Closed(f"the kernel's agent cannot be reached ({e.strerror or e})") from None

    def test(self, source: str, count: int | None = None) -> dict:
        """Run a test cell; what it did, as data (see the module's docstring)."""
        self._cells += 1
        exchanges = self.side.exchanges
        name = f"test_cell_{self._cells}.py"
        filename = os.path.join(self.folder, name)
        out = io.StringIO()
        result: dict
        sock = None
        try:
            sock = self._connect()
            self.side.conn = sock
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (the tests' recorded_warnings() turns them back on inside)
                # The answers' names this cell mentions (also those it assigns too, `x = np.asarray(x)`), all of them
                # if it reads globals(), and those already bound to a handle (a helper of an earlier cell may call
                # them): data the cell does not mention is not sent again.
                mentioned = _mentioned(source)
                names = [n for n in self.proxied if mentioned is None or n in mentioned or
                         isinstance(self.ns.get(n), Proxy)]
                found = self.side.request("lookup", None, names=names)
                for name in names:
                    if name in found:
                        self.ns[name] = found[name]
                    else:
                        self.ns.pop(name, None)
                exec(self._compile(source, name), self.ns)
            result = {"status": "ok"}
        except Closed as e:
            result = {"status": "gone", "why": one_line(e)}
        except RemoteError as e:  # the student's exception, not caught by the test
            result = {"status": "error", "student": True, "ename": e.type_name, "evalue": one_line(e),
                      "frames": list(e.frames)}
        except Exception as e:  # the test's verdict
            lines = [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename == filename]
            result = {"status": "error", "student": False, "ename": type(e).__name__,
                      "evalue": str(e)[:TEST_MESSAGE_CHARS], "line": lines[-1] if lines else 1}
        finally:
            self.side.graphs.clear()
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.sendall(_DONE)
                sock.close()
            self.side.conn = None
        result["stdout"] = out.getvalue()[:OUTPUT_CHARS]
        result["exchanges"] = self.side.exchanges - exchanges
        return result


def _done_frame() -> bytes:
    import json

    from .frames import _HEAD, MAGIC

    header = json.dumps({"op": "done"}).encode()
    return _HEAD.pack(MAGIC, len(header), 0) + header


_DONE = _done_frame()


def main(fd: int) -> None:
    """The checker process: requests from the grader on the connection `fd`, one reply each."""
    conn = Connection(fd)
    warnings.simplefilter("ignore")
    notebook = None
    while True:
        try:
            kind, *args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            if kind == "abort":  # (it came after the test it was meant for had ended: nothing to stop)
                continue
            if kind == "start":
                notebook = NotebookChecker(*args, control=conn)
                reply = {"status": "ok"}
            elif kind == "given":
                reply = notebook.given(*args)
            elif kind == "test":
                reply = notebook.test(*args)
            else:
                reply = {"status": "error", "ename": "ValueError", "evalue": f"unknown request {kind!r}"}
        except BaseException as e:  # the checker's own failure: the grader says so, it does not stop
            reply = {"status": "failed", "why": f"{type(e).__name__}: {one_line(e)}"}
        conn.send(reply)
