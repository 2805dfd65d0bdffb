"""The two ends of the boundary between the student's kernel and the checker, and the checker's proxies.

An :class:`Endpoint` sends requests and answers them over a socket, in the
frames of :mod:`autograde.run.frames` (data only); the kernel's end is
:mod:`autograde.run.agent`'s, the checker's :mod:`autograde.run.checker`'s. An
object of the other side that is not data is a :class:`Proxy` here, whose
calls and attributes are forwarded. The grader sends this module's source into
each kernel after the frames' (so it imports only the standard library and
NumPy).
"""
import sys

import numpy as np

if __name__ != "autograde_agent":  # imported as a module; in the kernel the frames' names are defined above
    from .frames import (  # noqa: F401 (RemoteError, WireError: importable from here, as before)
        Closed,
        RemoteError,
        WireError,
        _torch,
        decode,
        encode,
        is_tensor,
        one_line,
        receive,
        remote_error,
        send,
        type_name,
    )


class Endpoint:
    """One side of a connection: it exports its own objects as numbered handles (`export` is "$handle" in the
    kernel, "$lent" in the checker), turns the other side's into :class:`Proxy` objects, and answers requests."""

    def __init__(self, export: str, imported: str):
        self.export, self.imported = export, imported
        self.objects: dict[int, object] = {}
        self._ids: dict[int, int] = {}
        self.conn = None
        self.sent_bytes = 0  # the bytes of arrays this side has sent (a memory probe leaves its inputs out)
        self.exchanges = 0  # requests sent or answered: what crossed between the processes, one round trip each

    # Encoding: what is not data is exported; the other side's proxies go back as their own handles.
    def _handle(self, obj):
        if isinstance(obj, Proxy) and obj._endpoint is self:
            return {self.imported: obj._id}
        key = id(obj)
        if key not in self._ids or self.objects.get(self._ids[key]) is not obj:
            self._ids[key] = len(self.objects) + 1
            self.objects[self._ids[key]] = obj
        types = [f"{c.__module__}.{c.__qualname__}"[:200] for c in type(obj).__mro__[:30]]
        return {self.export: self._ids[key], "callable": callable(obj), "types": types}

    def _resolve(self, node):
        if "$parameter" in node:  # a parameter of the other side's: its values (see :meth:`parameter`)
            return self.parameter(node["$parameter"], node["ref"])
        if self.export in node:
            try:
                return self.objects[int(node[self.export])]
            except (KeyError, ValueError, TypeError):
                raise WireError("a handle that was never given") from None
        return proxy_class(node.get("types"), self.mirrors)(self, int(node[self.imported]), bool(node.get("callable")))

    mirrors: dict = {}  # classes of this side's own that the other side's objects of the same name may mirror

    def parameter(self, tensor, ref: dict):
        """What a parameter of the other side's becomes here: its values (the checker's side keeps the link)."""
        return tensor

    def pack(self, value):
        blobs = []
        return encode(value, blobs, self._handle), blobs

    def unpack(self, tree, blobs):
        return decode(tree, blobs, self._resolve)

    # One stream of random numbers for both sides: a request that runs the other side's code carries the state of
    # torch's generator, and its reply carries it back, so that what the student's code draws and what the test
    # draws follow each other as they did in one process (a test's inputs and a module's initial weights alike).
    sync_random = False  # whether this side's requests carry it (the checker's, once its notebook has torch)
    RANDOM_OPS = frozenset(("call", "probe", "rerun_answer"))

    def _random_state(self):
        torch = _torch()
        return torch.get_rng_state() if torch is not None else None

    def _set_random_state(self, state) -> None:
        torch = _torch()
        if torch is not None and is_tensor(state) and state.dtype == torch.uint8 and state.dim() == 1:
            try:
                torch.set_rng_state(state)
            except RuntimeError:  # (not a generator's state)
                pass

    # Requests: send one, answering the other side's requests until the reply comes.
    def request(self, op: str, target=None, **fields):
        if self.conn is None:
            raise Closed("no connection")
        message = {"op": op, "target": target}
        blobs = []
        if self.sync_random and op in self.RANDOM_OPS and _torch() is not None:
            message["random"] = encode(self._random_state(), blobs, self._handle)
        for key, value in fields.items():
            message[key] = encode(value, blobs, self._handle)
        self.sent_bytes += sum(len(b) for b in blobs)
        self.exchanges += 1
        send(self.conn, message, blobs)
        return self.serve_until_reply()

    def serve_until_reply(self):
        while True:
            self.wait()
            message, blobs = receive(self.conn)
            if "op" not in message:
                if "random" in message:
                    self._set_random_state(decode(message["random"], blobs, self._resolve))
                if message.get("warnings"):
                    self.warned(message["warnings"])
                if "raised" in message:
                    raise remote_error(message["raised"] if isinstance(message["raised"], dict) else {})
                return decode(message.get("ok"), blobs, self._resolve)
            if message["op"] == "done":
                raise Closed("the other side ended the exchange")
            self.answer(message, blobs)

    def serve_until_done(self) -> None:
        """Answer the other side's requests until it says it is done (or goes)."""
        while True:
            try:
                message, blobs = receive(self.conn)
            except Closed:
                return
            if message.get("op") == "done":
                return
            self.answer(message, blobs)

    def answer(self, message: dict, blobs) -> None:
        """Carry out one request of the other side's and send the reply."""
        self.exchanges += 1
        caught = []
        random = "random" in message and _torch() is not None
        try:
            if random:
                self._set_random_state(decode(message["random"], blobs, self._resolve))
            with self.watch(caught):
                result = self.perform(message, blobs)
            tree, out = self.pack(result)
            reply = {"ok": tree}
        except Closed:
            raise
        except (Exception, SystemExit) as error:
            out = []
            reply = {"raised": {"type": type_name(error), "message": one_line(error), "frame": self.frame_of(error),
                                "bases": [c.__name__ for c in type(error).__mro__[1:8]
                                          if c.__module__ == "builtins"]}}
        if random:
            reply["random"] = encode(self._random_state(), out, self._handle)
        if caught:
            reply["warnings"] = caught[:20]
        send(self.conn, reply, out)

    def perform(self, message: dict, blobs):
        """What request `message` asks of one of this side's objects."""
        op = message.get("op")
        target = self._resolve({self.export: message.get("target")})
        field = lambda key: decode(message.get(key), blobs, self._resolve)  # noqa: E731
        if op == "call":
            return target(*(field("args") or ()), **(field("kwargs") or {}))
        if op == "getattr":
            return getattr(target, str(field("name")))
        if op == "setattr":
            return setattr(target, str(field("name")), field("value"))
        if op == "getitem":
            return target[field("key")]
        if op == "setitem":
            target[field("key")] = field("value")
            return None
        if op == "len":
            return len(target)
        if op == "iter":
            return list(target)
        if op == "array":
            return target.detach().cpu().numpy() if is_tensor(target) else np.asarray(target)
        if op == "str":
            return one_line(target)
        if op == "bool":
            return bool(target)
        if op == "isinstance":
            return isinstance(field("value"), target) if isinstance(target, type) else False
        if op == "assign":  # a parameter changed in place on the other side: the same change here
            with __import__("torch").no_grad():
                target.copy_(field("value"))
            return None
        raise WireError(f"an unknown request {str(op)[:40]!r}")

    # What each side adds: waiting, recording warnings around a request it carries out, re-raising them when replied.
    def wait(self) -> None:
        pass

    def watch(self, caught: list):
        import contextlib

        return contextlib.nullcontext()

    def warned(self, warned: list) -> None:
        pass

    def frame_of(self, error: BaseException):
        return None


class Proxy:
    """An object of the other side: what is done with it is asked of that side, which answers with data or with
    another proxy. Only what the course's tests do with the student's objects is forwarded: calls, attributes,
    items, length, iteration, conversion to an array, truth."""

    __slots__ = ("_endpoint", "_id", "_callable")
    _OWN = frozenset(("_endpoint", "_id", "_callable", "_ask", "__class__", "__slots__", "__reduce_ex__"))

    def __init__(self, endpoint: Endpoint, ident: int, is_callable: bool):
        object.__setattr__(self, "_endpoint", endpoint)
        object.__setattr__(self, "_id", ident)
        object.__setattr__(self, "_callable", is_callable)

    def __getattribute__(self, name):
        # Every attribute is the other side's, also those a mirrored base class defines (nn.Module.double...).
        if name in Proxy._OWN:
            return object.__getattribute__(self, name)
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return object.__getattribute__(self, "_ask")("getattr", name=name)

    def _ask(self, op, **fields):
        return object.__getattribute__(self, "_endpoint").request(op, object.__getattribute__(self, "_id"), **fields)

    def __call__(self, *args, **kwargs):
        return self._ask("call", args=args, kwargs=kwargs)

    def __setattr__(self, name, value):
        self._ask("setattr", name=name, value=value)

    def __delattr__(self, name):
        raise AttributeError(name)

    def __getitem__(self, key):
        return self._ask("getitem", key=key)

    def __setitem__(self, key, value):
        self._ask("setitem", key=key, value=value)

    def __len__(self):
        return self._ask("len")

    def __iter__(self):
        return iter(self._ask("iter"))

    def __array__(self, dtype=None, copy=None):
        array = np.asarray(self._ask("array"))
        return array if dtype is None else array.astype(dtype)

    def __bool__(self):
        return bool(self._ask("bool"))

    def __instancecheck__(self, instance):  # isinstance(x, a class of the other side's): asked there
        return bool(self._ask("isinstance", value=instance))

    def __repr__(self):
        return f"<the other side's object #{object.__getattribute__(self, '_id')}>"

    def __hash__(self):
        return hash((id(object.__getattribute__(self, "_endpoint")), object.__getattribute__(self, "_id")))

    def __eq__(self, other):
        return self is other


# The libraries whose classes a proxy may mirror, so that ``isinstance(proxy, nn.Linear)`` holds as it did for the
# object itself. Only classes this process has already imported from these, never a class the other side defined.
MIRRORED = ("torch.nn.", "torch.optim.")
_PROXY_CLASSES: dict = {}


def proxy_class(types, own: dict | None = None) -> type:
    """:class:`Proxy`, or a subclass of it that also derives from the first of `types` (names "module.qualname",
    most derived first) that is a class of a mirrored library this process has imported, or one of `own` (this
    side's own classes by name: the notebook's given classes, which the other side defines alike)."""
    for name in types if isinstance(types, list) else ():
        name = str(name)
        if own and name in own:
            return _mirror(own[name])
        if not name.startswith(MIRRORED):
            continue
        module, _, qualname = name.rpartition(".")
        while module and module not in sys.modules:
            module, _, head = module.rpartition(".")
            qualname = f"{head}.{qualname}"
        found = sys.modules.get(module)
        for part in qualname.split("."):
            found = getattr(found, part, None)
        if not isinstance(found, type) or found.__module__.split(".")[0] != "torch":
            continue
        return _mirror(found)
    return Proxy


def _mirror(found: type) -> type:
    if found not in _PROXY_CLASSES:
        try:
            _PROXY_CLASSES[found] = type(f"Remote{found.__name__}", (Proxy, found), {"__slots__": ()})
        except TypeError:  # (a layout that cannot be mixed with a proxy's)
            _PROXY_CLASSES[found] = Proxy
    return _PROXY_CLASSES[found]
