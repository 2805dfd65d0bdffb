"""What crosses between the student's kernel and the checker: data only, in frames of bounded size.

Both sides use this module and :mod:`autograde.run.wire` (the endpoints that
exchange these frames): the checker imports them, and the grader sends their
source into each kernel with :mod:`autograde.run.agent` (so they import only
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
