"""What crosses between the student's kernel and the checker: data only, in frames of bounded size.

Both sides use this module: the checker imports it, and the grader sends its
source into each kernel with :mod:`autograde.run.agent` (so it imports only
the standard library and NumPy, and PyTorch only where the value is a tensor).

A frame is a JSON header and binary blobs. A value is encoded as a JSON tree in
which everything that is not plain JSON is a one-key object:

- ``{"$array": i, "dtype": "<f8", "shape": [2, 3]}``: a NumPy array, its raw
  bytes in blob ``i``, read back as a view of them (numbers, booleans and
  strings only: no object, void, structured or datetime dtypes, so nothing is
  ever unpickled; an ``ndarray`` subclass travels as a plain array);
- ``{"$tensor": i, "dtype": ..., "shape": ..., "torch_dtype": "float32", "grad": false}``:
  a torch tensor, as the array of its values and its dtype's name;
- ``{"$scalar": i}`` (a NumPy scalar, as a 0-d array), ``{"$tuple": [...]}``,
  ``{"$dict": [[k, v], ...]}``, ``{"$float": "nan"}``, ``{"$complex": [re, im]}``,
  ``{"$slice": [start, stop, step]}``, ``{"$ellipsis": 0}``, ``{"$dtype": "float64"}``
  (a NumPy dtype), ``{"$torch_dtype": "float64"}``;
- ``{"$handle": n, "type": name, "callable": bool}``: an object of the kernel that is not
  data (a function, a class, a module): the checker gets a proxy that
  forwards what it does with it (:mod:`autograde.run.checker`);
- ``{"$lent": n, ...}``: the same for an object of the checker lent to
  student code (a reader that counts what it hands out, a correct function for
  one retry).

Nothing here ever calls ``pickle``, ``eval`` or a class named by the other side.
"""
import json
import math
import socket
import struct
import sys
from collections import OrderedDict

import numpy as np

MAGIC = b"AGW1"
MAX_FRAME_BYTES = 1 << 30  # one value crossing the boundary: a gigabyte at most
MAX_DEPTH = 32
MAX_HEADER_BYTES = 64 << 20  # the JSON part of a frame
MAX_TEXT = 1 << 20  # characters of one string
_HEAD = struct.Struct(">4sII")
_LEN = struct.Struct(">Q")


class WireError(Exception):
    """A frame that is not one (too large, malformed, or with a value that is not data)."""


class Closed(BaseException):
    """The other side has gone (its process ended, or it closed the connection). Not an ``Exception``: a test's
    ``except Exception`` must not swallow it."""


def _torch():
    return sys.modules.get("torch")


def is_tensor(value) -> bool:
    """Whether `value` is a torch tensor (without importing torch)."""
    torch = _torch()
    return torch is not None and isinstance(value, torch.Tensor)


def _check_dtype(dtype: np.dtype) -> np.dtype:
    if dtype.kind in "OVMm" or dtype.fields is not None or dtype.hasobject or dtype.subdtype is not None:
        raise WireError(f"an array of dtype {dtype} is not data")
    return dtype


def _array_node(array: np.ndarray, blobs: list, key: str = "$array") -> dict:
    """The node of a plain array (its dtype, shape and the index of its bytes in `blobs`)."""
    array = np.asarray(array)
    _check_dtype(array.dtype)
    # (not np.ascontiguousarray, which makes a 0-d array 1-d)
    blobs.append((array if array.flags.c_contiguous else array.copy(order="C")).tobytes())
    return {key: len(blobs) - 1, "dtype": array.dtype.str, "shape": list(array.shape)}


def _read_array(node: dict, blobs: list, key: str = "$array") -> np.ndarray:
    """The array of a node made by :func:`_array_node`: a writable view of the received bytes, no copy."""
    try:
        dtype = _check_dtype(np.dtype(str(node["dtype"])))
        shape = tuple(int(n) for n in node["shape"])
        blob = blobs[int(node[key])]
    except (KeyError, TypeError, ValueError, IndexError):
        raise WireError("a malformed array") from None
    if any(n < 0 for n in shape) or len(shape) > 32 or len(blob) != math.prod(shape) * dtype.itemsize:
        raise WireError("an array's bytes do not match its shape")
    return np.frombuffer(blob, dtype=dtype).reshape(shape)


def encode(value, blobs: list, handle, depth: int = 0):
    """The JSON tree of `value`, appending its arrays to `blobs`; `handle(obj)` encodes what is not data."""
    if depth > MAX_DEPTH:
        raise WireError("a value nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        if isinstance(value, str) and len(value) > MAX_TEXT:
            raise WireError("a string too long")
        return value
    if isinstance(value, int) and type(value) in (int, bool):
        return value if abs(value) < 2**63 else {"$bigint": str(value)}
    if type(value) is float:
        return value if math.isfinite(value) else {"$float": repr(value)}
    if type(value) is complex:
        return {"$complex": [encode(value.real, blobs, handle), encode(value.imag, blobs, handle)]}
    if isinstance(value, np.ndarray):
        try:
            return _array_node(value, blobs)
        except WireError:
            return handle(value)
    if isinstance(value, np.generic) and not isinstance(value, (np.void, np.object_)):
        try:
            return _array_node(np.asarray(value), blobs, "$scalar")
        except WireError:
            return handle(value)
    if isinstance(value, np.dtype):
        return {"$dtype": value.str} if value.kind not in "OV" else handle(value)
    if is_tensor(value):
        torch = _torch()
        ref = getattr(value, "_wire_ref", None)
        if ref is not None:  # a parameter of the other side's, received earlier: it goes back as itself
            return handle(ref)
        tensor = value.detach()
        if tensor.layout != torch.strided or tensor.is_quantized or tensor.device.type == "meta":
            return handle(value)
        name = str(tensor.dtype).removeprefix("torch.")
        if tensor.dtype in (torch.bfloat16,):
            array = tensor.to(torch.float32).cpu().numpy()
        elif tensor.is_complex() or tensor.dtype.is_floating_point or tensor.dtype in (
                torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
            array = tensor.cpu().resolve_conj().resolve_neg().numpy()
        else:
            return handle(value)
        node = _array_node(array, blobs, "$tensor")
        node.update(torch_dtype=name, grad=bool(value.requires_grad))
        if isinstance(value, torch.nn.Parameter):  # its values, and a handle through which it can be changed in place
            node["ref"] = handle(value)
        return node
    torch = _torch()
    if torch is not None and isinstance(value, torch.dtype):
        return {"$torch_dtype": str(value).removeprefix("torch.")}
    if torch is not None and isinstance(value, torch.Size):
        return {"$tuple": [int(v) for v in value]}
    if type(value) is list:
        return [encode(v, blobs, handle, depth + 1) for v in value]
    if type(value) is tuple:
        return {"$tuple": [encode(v, blobs, handle, depth + 1) for v in value]}
    if type(value) in (dict, OrderedDict):  # (a module's state_dict is an OrderedDict: its items are the data)
        return {"$dict": [[encode(k, blobs, handle, depth + 1), encode(v, blobs, handle, depth + 1)]
                          for k, v in value.items()]}
    if type(value) is slice:
        return {"$slice": [encode(value.start, blobs, handle), encode(value.stop, blobs, handle),
                           encode(value.step, blobs, handle)]}
    if value is Ellipsis:
        return {"$ellipsis": 0}
    return handle(value)


_TORCH_DTYPES = {"float16", "bfloat16", "float32", "float64", "complex64", "complex128", "bool", "uint8", "int8",
                 "int16", "int32", "int64"}


def decode(tree, blobs: list, resolve, depth: int = 0):
    """The value of a JSON tree made by :func:`encode`; `resolve(node)` turns a handle or lent node into an object."""
    if depth > MAX_DEPTH:
        raise WireError("a value nested too deeply")
    if tree is None or isinstance(tree, (bool, int, float, str)):
        return tree
    if isinstance(tree, list):
        return [decode(v, blobs, resolve, depth + 1) for v in tree]
    if not isinstance(tree, dict) or len(tree) < 1:
        raise WireError("a malformed value")
    if "$array" in tree:
        return _read_array(tree, blobs)
    if "$scalar" in tree:
        return _read_array(tree, blobs, "$scalar")[()]
    if "$tensor" in tree:
        torch = __import__("torch")
        name = tree.get("torch_dtype")
        if name not in _TORCH_DTYPES:
            raise WireError("a tensor of an unknown dtype")
        array = _read_array(tree, blobs, "$tensor")
        tensor = torch.from_numpy(np.array(array)).to(getattr(torch, name))
        if tree.get("grad") is True and (tensor.is_floating_point() or tensor.is_complex()):
            tensor.requires_grad_(True)  # (a leaf, as the sender's was: gradients through it can be asked for)
        if isinstance(tree.get("ref"), dict):
            return resolve({"$parameter": tensor, "ref": tree["ref"]})
        return tensor
    if "$tuple" in tree:
        return tuple(decode(v, blobs, resolve, depth + 1) for v in tree["$tuple"])
    if "$dict" in tree:
        return {_hashable(decode(k, blobs, resolve, depth + 1)): decode(v, blobs, resolve, depth + 1)
                for k, v in tree["$dict"]}
    if "$float" in tree:
        return float(tree["$float"]) if tree["$float"] in ("nan", "inf", "-inf") else _bad()
    if "$bigint" in tree:
        return int(str(tree["$bigint"])[:400])
    if "$complex" in tree:
        re, im = tree["$complex"]
        return complex(decode(re, blobs, resolve), decode(im, blobs, resolve))
    if "$slice" in tree:
        return slice(*(decode(v, blobs, resolve, depth + 1) for v in tree["$slice"]))
    if "$ellipsis" in tree:
        return Ellipsis
    if "$dtype" in tree:
        dtype = np.dtype(str(tree["$dtype"]))
        return dtype if dtype.kind not in "OV" else _bad()
    if "$torch_dtype" in tree:
        name = tree["$torch_dtype"]
        return getattr(__import__("torch"), name) if name in _TORCH_DTYPES else _bad()
    if "$handle" in tree or "$lent" in tree:
        return resolve(tree)
    raise WireError("a malformed value")


def _hashable(key):
    if isinstance(key, (list, dict, np.ndarray)):
        raise WireError("a dict key that is not hashable")
    return key


def _bad():
    raise WireError("a malformed value")


def send(sock: socket.socket, message: dict, blobs=()) -> None:
    """Send one frame: `message` (JSON) and `blobs` (bytes)."""
    header = json.dumps(message, allow_nan=True, separators=(",", ":")).encode()
    total = len(header) + sum(len(b) for b in blobs)
    if total > MAX_FRAME_BYTES:
        raise WireError(f"a value of {total / 2**20:.0f} MiB is too large to pass (at most "
                        f"{MAX_FRAME_BYTES / 2**20:.0f} MiB)")
    parts = [_HEAD.pack(MAGIC, len(header), len(blobs))] + [_LEN.pack(len(b)) for b in blobs] + [header]
    if total < 1 << 20:  # one system call for a small frame
        sock.sendall(b"".join(parts + list(blobs)))
        return
    sock.sendall(b"".join(parts))
    for blob in blobs:
        sock.sendall(blob)


def _exactly(sock: socket.socket, size: int) -> bytearray:
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
        n = sock.recv_into(view[got:], size - got)
        if n == 0:
            raise Closed("the other side closed the connection")
        got += n
    return buffer


def receive(sock: socket.socket) -> tuple[dict, list]:
    """One frame from `sock`: (message, blobs). Raises :class:`Closed` at the end, :class:`WireError` if malformed."""
    try:
        magic, header_size, count = _HEAD.unpack(bytes(_exactly(sock, _HEAD.size)))
    except OSError as e:
        raise Closed(str(e)) from None
    if magic != MAGIC or count > 4096 or header_size > MAX_HEADER_BYTES:
        raise WireError("not a frame of the grader's")
    sizes = [_LEN.unpack(bytes(_exactly(sock, _LEN.size)))[0] for _ in range(count)]
    if header_size + sum(sizes) > MAX_FRAME_BYTES:
        raise WireError("a frame too large")
    try:
        message = json.loads(bytes(_exactly(sock, header_size)))
    except ValueError:
        raise WireError("a frame whose header is not JSON") from None
    if not isinstance(message, dict):
        raise WireError("a frame whose header is not an object")
    return message, [_exactly(sock, size) for size in sizes]


# --- Objects that are not data: each side keeps its own and hands the other a numbered proxy. ---

MESSAGE_CHARS = 300  # of an exception's message that crosses: its first line, cut


def one_line(text) -> str:
    """The first line of `text`, at most :data:`MESSAGE_CHARS` characters."""
    try:
        text = str(text)
    except Exception:  # (a message whose __str__ raises)
        return "<a message that cannot be printed>"
    return (text.strip().splitlines() or [""])[0][:MESSAGE_CHARS]


def type_name(error: BaseException) -> str:
    """An exception's type name as it may cross: an identifier of at most 80 characters."""
    name = type(error).__name__
    return name if name.isidentifier() and len(name) <= 80 and name.isascii() else "Exception"


class RemoteError(Exception):
    """An exception raised on the other side, as data: its type's name, its message's first line and, for the
    student's code, the frames of the notebook's cells it came through (execution count, line, function)."""

    type_name = "Exception"
    frames = ()

    def __str__(self):
        return self.args[0] if self.args else ""


_REMOTE_TYPES: dict = {}


def remote_error(info: dict) -> RemoteError:
    """The exception to raise for `info` ({"type", "message", "frame", "bases"}): an instance of the builtin
    exception of that name or, failing that, of its nearest builtin base (so ``except ValueError`` works, and
    ``except RuntimeError`` for torch's GradcheckError), and always of :class:`RemoteError`."""
    name = str(info.get("type", "Exception"))[:80]
    base = Exception
    bases = info.get("bases") if isinstance(info.get("bases"), list) else []
    for candidate in [name] + [str(b)[:80] for b in bases[:8]]:  # the nearest builtin exception of its type
        found = getattr(__import__("builtins"), candidate, None)
        if isinstance(found, type) and issubclass(found, Exception) and not issubclass(found, RemoteError):
            base = found
            break
    if base not in _REMOTE_TYPES:
        _REMOTE_TYPES[base] = type(base.__name__, (RemoteError, base), {"__module__": "builtins"})
    error = _REMOTE_TYPES[base](one_line(info.get("message", "")))
    error.type_name = name if name.isidentifier() else "Exception"
    frames = info.get("frame")
    if isinstance(frames, list):
        error.frames = tuple((f[0], f[1], str(f[2])[:80]) for f in frames[-20:]
                             if isinstance(f, list) and len(f) == 3 and all(type(v) is int for v in f[:2]))
    return error


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
