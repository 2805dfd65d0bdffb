"""Runs inside the student's kernel: answers the checker's requests with data, never sees a test.

The grader sends :mod:`autograde.run.wire`'s, :mod:`autograde.run.probes`' and
this file's source into each kernel before any cell runs, executed in a namespace of their own, and calls
:func:`install`: a Unix socket listens in the sandbox's ``/tmp`` and a
function under a name drawn at random is put in ``builtins``. For each test
cell the grader executes only a call of that function, which serves the
checker (:mod:`autograde.run.checker`) until it says the cell is done: it looks
up the notebook's names, calls the student's functions with the arguments the
checker sends, and answers with data (or a numbered handle for what is not).

Nothing here is trusted: student code can replace or break all of it, and
gains nothing by that, because everything it could send back is what its own
functions could have returned. What it never gets is the test: its source,
its expected values, its helpers.
"""
import builtins
import contextlib
import socket
import sys
import warnings

if __name__ != "autograde_agent":  # imported as a module (the tests); in the kernel wire's names are defined above
    from .probes import PROBES
    from .wire import Closed, Endpoint, one_line, receive

MISSING = {"$missing": 1}


class KernelSide(Endpoint):
    """The kernel's end: the student's objects go out as handles, warnings are recorded, and an exception's
    frame is the innermost one in a cell of the notebook (its execution count and line)."""

    def __init__(self, shell):
        super().__init__("$handle", "$lent")
        self.shell = shell

    @contextlib.contextmanager
    def watch(self, caught: list):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                yield
            finally:
                caught.extend([w.category.__name__[:80], one_line(w.message)] for w in seen[:20])

    def frame_of(self, error: BaseException):
        """The frames of `error`'s traceback that lie in the notebook's cells, outermost first (at most 20):
        [execution count, line, function] each."""
        cells = getattr(getattr(self.shell, "compile", None), "_filename_map", {})
        found, tb = [], error.__traceback__
        while tb is not None:
            count = cells.get(tb.tb_frame.f_code.co_filename)
            if isinstance(count, int):
                found.append([count, tb.tb_lineno, tb.tb_frame.f_code.co_name[:80]])
            tb = tb.tb_next
        return found[-20:]

    def perform(self, message: dict, blobs):
        op = message.get("op")
        names = self.shell.user_ns
        if op == "lookup":  # the notebook's values of these names (those it defines)
            asked = self.unpack(message.get("names"), blobs) or []
            return {str(name): names[name] for name in asked if isinstance(name, str) and name in names}
        if op == "set_globals":  # put these values in the notebook's namespace; the values they replace
            values = self.unpack(message.get("values"), blobs) or {}
            previous = {}
            for name, value in values.items():
                previous[name] = names.get(name, MISSING)
                if isinstance(value, dict) and value == MISSING:
                    names.pop(name, None)
                else:
                    names[name] = value
            return previous
        if op == "seed":  # the checker's test seeded its own torch: the student's code draws as it would beside it
            __import__("torch").manual_seed(int(self.unpack(message.get("seed"), blobs)))
            return None
        if op == "probe":  # a measurement of the student's function, where its autograd graph is (probes.py)
            probe = PROBES[str(self.unpack(message.get("name"), blobs))]
            target = self._resolve({self.export: message.get("target")})
            return probe(target, *(self.unpack(message.get("args"), blobs) or ()),
                         **(self.unpack(message.get("kwargs"), blobs) or {}))
        if op == "rerun_answer":
            return self._rerun_answer(self.unpack(message.get("missing"), blobs) or [],
                                      self.unpack(message.get("references"), blobs) or {})
        return super().perform(message, blobs)

    def _rerun_answer(self, missing: list, references: dict) -> dict:
        """Run again the last answer cell that assigns one of `missing` (its run stopped before it did), with
        `references` (correct earlier functions, lent by the checker) in the namespace while it runs; the names it
        then defines are kept. {"ran": bool, "found": [names]}."""
        import ast

        names = self.shell.user_ns

        def assigns_one(source):
            try:
                tree = ast.parse(source)
            except SyntaxError:
                return False
            bound = {node.id for statement in tree.body if not isinstance(statement, (ast.FunctionDef, ast.ClassDef))
                     for node in ast.walk(statement) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
            return bool(bound & set(missing))

        answers = [source for source in list(names.get("_ih", []))[:-1] if isinstance(source, str) and assigns_one(source)]
        if not answers:
            return {"ran": False, "found": []}
        absent = object()
        saved = {name: names.get(name, absent) for name in references}
        names.update(references)
        scratch = dict(names)
        try:
            exec(compile(answers[-1], "<your answer cell>", "exec"), scratch)
            ran = True
        except Exception:
            ran = False
        finally:
            for name, value in saved.items():
                if value is absent:
                    names.pop(name, None)
                else:
                    names[name] = value
        found = [name for name in missing if name in scratch]
        for name in found:
            names[name] = scratch[name]
        return {"ran": ran, "found": found}


_state: dict = {}


def install(path: str, entry: str) -> None:
    """Listen at `path` and put :func:`serve` in ``builtins`` as `entry`."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with contextlib.suppress(FileNotFoundError):
        __import__("os").unlink(path)
    listener.bind(path)
    listener.listen(4)
    _state.update(listener=listener, side=KernelSide(get_ipython()))  # noqa: F821 (the kernel's)
    setattr(builtins, entry, serve)


def serve() -> None:
    """Answer the checker's requests until it says the test cell is done."""
    side = _state["side"]
    conn, _ = _state["listener"].accept()
    side.conn = conn
    try:
        while True:
            try:
                message, blobs = receive(conn)
            except Closed:
                return
            if message.get("op") == "done":
                return
            side.answer(message, blobs)
    finally:
        side.conn = None
        conn.close()
        sys.stdout.flush()
