"""Runs inside the student's kernel: answers the checker's requests with data, never sees a test.

The grader sends :mod:`autograde.run.frames`', :mod:`autograde.run.wire`'s, :mod:`autograde.run.probes`' and
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
    from .wire import Endpoint, one_line

MISSING = {"$missing": 1}


class KernelSide(Endpoint):
    """The kernel's end: the student's objects go out as handles, warnings are recorded, and an exception's
    frame is the innermost one in a cell of the notebook (its execution count and line)."""

    @property
    def sync_random(self):  # (its own requests, a lent class called, carry torch's generator too: one stream)
        return "torch" in sys.modules

    def __init__(self, shell):
        super().__init__("$handle", "$lent")
        self.shell = shell
        self.mirrored: dict = {}  # lent id -> the mirror of a module of the checker's

    # A module the checker lends (a correct earlier exercise's, built from a lent class) is mirrored here as a
    # module: its parameters are the kernel's, so that the student's model holds them and trains them, and a call
    # runs in the checker, with gradients back through it (see _lent_module_class).
    def _resolve(self, node):
        if self.imported in node and "torch.nn.modules.module.Module" in (node.get("types") or ()):
            ident = int(node[self.imported])
            if ident not in self.mirrored:
                self.mirrored[ident] = _lent_module_class()(self, ident)
            return self.mirrored[ident]
        return super()._resolve(node)

    def _handle(self, obj):
        ident = getattr(type(obj), "_lent_mirror", False) and obj.__dict__.get("_lent_id")
        if ident:
            return {self.imported: ident}
        return super()._handle(obj)

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
        if op == "lent_hooks":  # the student's hooks on a mirror, as the checker's module runs (see LentModule)
            mirror = self.mirrored.get(self.unpack(message.get("mirror"), blobs))
            inputs = self.unpack(message.get("inputs"), blobs)
            if mirror is None:
                return None
            changed = None  # (what a hook returned instead, else None: the checker keeps its own, with its graph)
            if "output" not in message:
                for hook in list(mirror._forward_pre_hooks.values()):
                    result = hook(mirror, inputs if changed is None else changed)
                    if result is not None:
                        changed = result if isinstance(result, tuple) else (result,)
                return changed
            output = self.unpack(message.get("output"), blobs)
            for hook in list(mirror._forward_hooks.values()):
                result = hook(mirror, inputs, output if changed is None else changed)
                if result is not None:
                    changed = result
            return changed
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


_LENT: list = []


def _lent_module_class():
    """The class of the mirrors of the checker's modules (made once torch is imported).

    A mirror holds the module's parameters as its own (children mirrored alike, so ``.parameters()``,
    ``.double()``, ``.eval()`` and optimisers work on them), and its ``forward`` asks the checker to run the module
    with these values: the parameters changed here since the last call are sent, those the checker changed come
    back. Where a gradient is wanted, the call is one autograd node whose backward asks the checker for the
    gradients of its inputs and parameters. Attributes the mirror does not hold (``attn.last_weights``) are read
    from the checker's module."""
    if _LENT:
        return _LENT[0]
    torch = __import__("torch")

    class LentCall(torch.autograd.Function):
        @staticmethod
        def forward(ctx, call, *tensors):
            out, graph = call.run(tensors, graph=True)
            ctx.call, ctx.graph = call, graph
            return tuple(out)

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, *grads):
            call = ctx.call
            found = call.side.request("lent_backward", call.mirror._lent_id, graph=ctx.graph, grads=list(grads),
                                      wanted=list(ctx.needs_input_grad[1:]))
            return (None, *found)

    class Call:
        """One call of a mirror: its arguments, with the tensors among them apart (they are the autograd inputs)."""

        def __init__(self, mirror, args, kwargs):
            self.mirror, self.side, self.args, self.kwargs = mirror, mirror._lent_side, list(args), dict(kwargs)
            self.places = [("a", i) for i, a in enumerate(self.args) if torch.is_tensor(a)] + [
                ("k", k) for k, v in self.kwargs.items() if torch.is_tensor(v)]
            self.params = list(mirror._lent_parameters())
            self.layout = None
            self.wanted = [bool(t.requires_grad) for t in self.tensors() + [p for _, _, p in self.params]]

        def tensors(self):
            return [self.args[i] if kind == "a" else self.kwargs[i] for kind, i in self.places]

        def run(self, tensors, graph):
            args, kwargs = list(self.args), dict(self.kwargs)
            inputs = tensors[:len(self.places)]
            for (kind, i), t in zip(self.places, inputs):
                if kind == "a":
                    args[i] = t.detach()
                else:
                    kwargs[i] = t.detach()
            sent = [[owner, name, p.detach()] for owner, name, p in self.params if self.mirror._lent_stale(p)]
            order = [[owner, name] for owner, name, _ in self.params] if graph else []
            mirrors = [m for m in self.mirror.modules() if getattr(type(m), "_lent_mirror", False)]
            hooked = [[m._lent_id, bool(m._forward_pre_hooks), bool(m._forward_hooks)] for m in mirrors
                      if m._forward_hooks or m._forward_pre_hooks]
            answer = self.side.request("lent_forward", self.mirror._lent_id, args=args, kwargs=kwargs, params=sent,
                                       training=self.mirror.training, graph=graph, wanted=self.wanted, order=order,
                                       hooked=hooked)
            self.mirror._lent_update(answer.get("updates") or [])
            out = answer.get("out")
            if not graph:
                return out, None
            self.layout = answer.get("layout")
            return answer.get("leaves"), answer.get("graph")

    class LentModule(torch.nn.Module):
        _lent_mirror = True

        def __init__(self, side, ident):
            super().__init__()
            self.__dict__.update(_lent_side=side, _lent_id=ident, _lent_versions={}, _lent_ready=False)
            layout = side.request("layout", ident)
            self.training = bool(layout.get("training", True))
            for name, value in layout.get("params") or []:
                param = torch.nn.Parameter(value.detach().clone(), requires_grad=bool(value.requires_grad))
                self.register_parameter(name, param)
                self._lent_versions[name] = (param._version, param.dtype, param.data_ptr())
            for name, child in layout.get("children") or []:
                self.add_module(name, child)
            self.__dict__["_lent_ready"] = True

        def _lent_parameters(self):
            for module in self.modules():
                if getattr(type(module), "_lent_mirror", False):
                    for name, p in module._parameters.items():
                        if p is not None:
                            yield module._lent_id, name, p

        def _lent_stale(self, p):
            for module in self.modules():
                if getattr(type(module), "_lent_mirror", False):
                    for name, q in module._parameters.items():
                        if q is p:
                            return module._lent_versions.get(name) != (p._version, p.dtype, p.data_ptr())
            return True

        def _lent_update(self, updates):
            for owner, name, value in updates:
                module = owner if getattr(type(owner), "_lent_mirror", False) else None
                if module is not None and module._parameters.get(name) is not None:
                    p = module._parameters[name]
                    with torch.no_grad():
                        p.data = value.to(p.dtype)
            for module in self.modules():
                if getattr(type(module), "_lent_mirror", False):
                    for name, p in module._parameters.items():
                        if p is not None:
                            module._lent_versions[name] = (p._version, p.dtype, p.data_ptr())

        def forward(self, *args, **kwargs):
            call = Call(self, args, kwargs)
            tensors = call.tensors() + [p for _, _, p in call.params]
            if not (torch.is_grad_enabled() and any(t.requires_grad for t in tensors)):
                out, _ = call.run(tensors, graph=False)
                return out
            leaves = LentCall.apply(call, *tensors)
            return _unflatten(call.layout, list(leaves))

        def __getattr__(self, name):
            try:
                return super().__getattr__(name)
            except AttributeError:
                if name.startswith("_") or not self.__dict__.get("_lent_ready"):
                    raise
            return self._lent_side.request("getattr", self._lent_id, name=name)

    def _unflatten(layout, leaves):
        """The output's structure (`layout`: "T" a tensor, a list or tuple of layouts, else the value itself)."""
        if layout == "T":
            return leaves.pop(0)
        if isinstance(layout, dict) and "list" in layout:
            return [_unflatten(item, leaves) for item in layout["list"]]
        if isinstance(layout, dict) and "tuple" in layout:
            return tuple(_unflatten(item, leaves) for item in layout["tuple"])
        return layout.get("value") if isinstance(layout, dict) else layout

    _LENT.append(LentModule)
    return LentModule


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
        side.serve_until_done()
    finally:
        side.conn = None
        conn.close()
        sys.stdout.flush()
