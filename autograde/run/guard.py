"""Runs inside the student's kernel: undo monkeypatching of what the tests rely on, and report it.

:class:`autograde.run.execute.GuardedExecute` sends this file's source to each
kernel before the first cell, runs it in a namespace of its own (not a module
in ``sys.modules``, with a private copy of the builtins) and calls
:func:`install`, which puts one entry point in ``builtins`` under a name drawn
at random for that kernel and registers the guard's IPython callbacks. The
grader calls that entry point before and after every test cell (:func:`check`,
:func:`after_test`), and every answer carries a sequence number and an HMAC
made with a key the grader drew for that kernel: an entry point replaced or
silenced by student code gives no valid answer, which the grader counts as
tampering. With each answer goes whether the last cell raised, seen by the
guard's own ``post_run_cell`` callback, so that a test whose error messages
were kept from the grader is still caught. :func:`snapshot` records, before any student code runs, the
functions the tests compare with (numpy, torch, math, hypothesis, builtins),
the classes whose methods the tests call (``torch.Tensor``, ``nn.Module``...),
IPython's execution machinery and the names that provided cells define;
:func:`check` puts back anything changed since and names it. A test cell
therefore always runs with the genuine functions, and one during which
student code changed them is not trusted.

This stops a submission from patching ``np.allclose``, the defaults of
``np.testing.assert_allclose``, ``builtins``, IPython's exception handling,
the kernel's messaging (``Session.send``, the display hook, the IOPub socket)
or the notebook's test helpers (rebinding them, or swapping their
``__code__``). It is not a security boundary: code in the same process can
always find the entry point (its name is in the request of every test cell)
and read the key from its closure, or read a test's locals through frames.
The sandbox is the boundary for files, grades and the network.
"""
import builtins
import hashlib
import hmac
import json
import linecache
import os
import sys
import threading
import types

# What the guard itself calls, bound before any student code runs: patching these later cannot blind it.
_modules = sys.modules
_realpath = os.path.realpath
_gettrace, _settrace, _getprofile, _setprofile = sys.gettrace, sys.settrace, sys.getprofile, sys.setprofile
_threads = threading.enumerate
_hmac_new, _sha256, _dumps = hmac.new, hashlib.sha256, json.dumps

MODULES = [
    "builtins", "math", "numpy", "numpy.testing", "numpy.testing._private.utils", "numpy._core.numeric",
    "numpy._core.fromnumeric", "numpy._core.umath", "numpy.linalg", "torch", "torch.testing",
    "torch.testing._comparison", "torch.nn", "torch.nn.functional", "torch.nn.modules.module",
    "torch.nn.modules.linear", "torch.nn.modules.activation", "hypothesis", "hypothesis.strategies",
    "IPython.core.interactiveshell", "ipykernel.ipkernel", "ipykernel.kernelbase", "ipykernel.zmqshell",
    "jupyter_client.session", "ipykernel.iostream", "ipykernel.displayhook", "ipykernel.jsonutil",
]
CLASSES = [
    ("torch", "Tensor"), ("torch.nn", "Module"), ("torch.nn", "Linear"), ("torch.nn", "MultiheadAttention"),
    ("IPython.core.interactiveshell", "InteractiveShell"), ("ipykernel.zmqshell", "ZMQInteractiveShell"),
    ("ipykernel.ipkernel", "IPythonKernel"), ("ipykernel.kernelbase", "Kernel"), ("builtins", "BaseException"),
    # The kernel's messaging: how a test's error and the cell's reply reach the grader.
    ("jupyter_client.session", "Session"), ("ipykernel.iostream", "IOPubThread"),
    ("ipykernel.iostream", "BackgroundSocket"), ("ipykernel.iostream", "OutStream"),
    ("ipykernel.displayhook", "ZMQShellDisplayHook"), ("ipykernel.zmqshell", "ZMQDisplayPublisher"),
    ("zmq.sugar.socket", "Socket"), ("zmq.eventloop.zmqstream", "ZMQStream"),
    ("IPython.core.displayhook", "DisplayHook"), ("IPython.core.displaypub", "DisplayPublisher"),
]
# Attributes of sys that cell outputs go through (compared by identity). Not sys.excepthook: IPython swaps it
# around every execution, and the kernel reports errors without it.
SYS_NAMES = ["stdout", "stderr", "modules", "meta_path", "path_hooks"]
# Entries that IPython itself swaps in and out around each execution.
UNGUARDED = {"builtins": {"input", "raw_input", "get_ipython", "display", "__IPYTHON__", "exit", "quit", "help", "_"}}
SHELL_LISTS = ["ast_transformers", "input_transformers_cleanup", "input_transformers_post"]

_state = {}


def _function_parts(value):
    """What monkeypatching can change inside a Python function without rebinding it."""
    return (value.__code__, value.__defaults__, dict(value.__kwdefaults__ or {}))


def _cell_contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return _EMPTY


_EMPTY = object()


def _all_parts(value):
    """Everything of a notebook's own function that can be changed in place: code, defaults, attributes, closure."""
    return (value.__code__, value.__defaults__, dict(value.__kwdefaults__ or {}), dict(vars(value)),
            tuple(_cell_contents(c) for c in value.__closure__ or ()))


def _same(a, b):
    """Whether two records of function parts hold the very same objects (identity: arrays have no plain ==)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(a[k] is b[k] for k in a)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) if isinstance(x, (tuple, dict)) else x is y for x, y in zip(a, b))
    return a is b


def _put_back(value, parts):
    """Restore the parts :func:`_all_parts` (or :func:`_function_parts`) recorded of function `value`."""
    value.__code__, value.__defaults__, value.__kwdefaults__ = parts[0], parts[1], parts[2] or None
    if len(parts) > 3:
        vars(value).clear()
        vars(value).update(parts[3])
        for cell, content in zip(value.__closure__ or (), parts[4]):
            if content is _EMPTY:
                continue
            cell.cell_contents = content


def _record(mapping):
    """A shallow copy of `mapping`, with the code and defaults of each Python function in it."""
    values = dict(mapping)
    parts = {k: _function_parts(v) for k, v in values.items() if isinstance(v, types.FunctionType)}
    return values, parts


def _messaging(shell, kernel):
    """The objects a cell's outputs and reply pass through, by label (those that exist in this kernel)."""
    found = {"the IPython shell": shell, "the kernel": kernel, "the display hook": getattr(shell, "displayhook", None),
             "the display publisher": getattr(shell, "display_pub", None), "sys.stdout": sys.stdout,
             "sys.stderr": sys.stderr}
    if kernel is not None:
        for name in ("session", "iopub_socket", "iopub_thread", "shell_stream", "control_stream"):
            found[f"the kernel's {name}"] = getattr(kernel, name, None)
    return {label: obj for label, obj in found.items() if obj is not None}


def _links(shell, kernel):
    """(object, attribute) pairs along the messaging path, whose values are compared by identity."""
    pairs = [(shell, name) for name in ("displayhook", "display_pub", "kernel")]
    for owner in (kernel, getattr(shell, "displayhook", None), getattr(shell, "display_pub", None)):
        pairs += [(owner, name) for name in ("session", "iopub_socket", "iopub_thread", "pub_socket", "shell_stream")]
    return [(owner, name) for owner, name in pairs if owner is not None and hasattr(owner, name)]


def _callable_traits(obj):
    """The callable trait values of a traitlets object (``Session.pack``...), which live outside its __dict__."""
    return {k: v for k, v in getattr(obj, "_trait_values", {}).items() if callable(v) and not isinstance(v, type)}


def snapshot(packages):
    """Import `packages` (top-level names) and record everything :func:`check` guards.

    Runs before any cell of the notebook, so nothing recorded is the student's.
    """
    import importlib

    for name in packages:
        try:
            importlib.import_module(name)
        except Exception:  # a package the grading environment lacks is simply not guarded
            pass
    modules = {}
    for name in MODULES:
        module = _modules.get(name)
        if module is None and name.split(".")[0] in _modules:
            try:
                module = importlib.import_module(name)
            except Exception:
                module = None
        if module is not None:
            entries = {k: v for k, v in vars(module).items() if k not in UNGUARDED.get(name, ())}
            modules[name] = (module, _record(entries))
    classes = {}
    for module_name, class_name in CLASSES:
        cls = getattr(_modules.get(module_name), class_name, None)
        if isinstance(cls, type):
            classes[f"{module_name}.{class_name}"] = (cls, _record(vars(cls)))
    shell = get_ipython()  # noqa: F821 (the kernel's global)
    kernel = getattr(shell, "kernel", None)
    links = [(owner, name, getattr(owner, name)) for owner, name in _links(shell, kernel)]
    _state.update(
        modules=modules, classes=classes, shell=shell, kernel=kernel, instances=_messaging(shell, kernel),
        links=links, traits={id(o): _callable_traits(o) for o in _messaging(shell, kernel).values()},
        sys={name: getattr(sys, name) for name in SYS_NAMES},
        shell_lists={n: list(getattr(shell, n, [])) for n in SHELL_LISTS},
        custom_exceptions=shell.custom_exceptions, events={k: list(v) for k, v in shell.events.callbacks.items()},
        meta_path=list(sys.meta_path), path_hooks=list(sys.path_hooks),
        threads={t.ident for t in _threads()}, names={},
    )


def remember(names):
    """Record the current values of `names` in the user namespace (provided cells defined them), with the code,
    defaults, attributes and closure of those that are functions."""
    namespace = _state["shell"].user_ns
    for name in names:
        if name in namespace:
            value = namespace[name]
            _state["names"][name] = (value, _all_parts(value) if isinstance(value, types.FunctionType) else None)


def _library_code(value, label):
    """Whether `value` is a function whose code lives in the package that `label` names (a library's own rewrap).

    torch, for one, replaces some of its functions with wrapped versions when
    a submodule is first imported (``torch.manual_seed`` by torch._dynamo).
    """
    package = _modules.get(label.split(".")[0])
    folder = getattr(package, "__path__", [None])[0]
    code = getattr(value, "__code__", None)
    return bool(folder and code and _realpath(code.co_filename).startswith(_realpath(folder) + os.sep))


def _restore_mapping(label, obj, recorded, setter, deleter, changes):
    values, parts = recorded
    current = vars(obj)
    for key, value in values.items():
        if key in current and current[key] is not value and _library_code(current[key], label):
            values[key] = current[key]  # adopt the library's own change
            if isinstance(current[key], types.FunctionType):
                parts[key] = _function_parts(current[key])
            continue
        if key not in current or current[key] is not value:
            changes.append(f"{label}.{key} was {'deleted' if key not in current else 'replaced'}")
            setter(obj, key, value)
        elif key in parts and not _same(_function_parts(value), parts[key]):
            changes.append(f"the code or defaults of {label}.{key} were changed")
            _put_back(value, parts[key])
    if isinstance(obj, type):
        for key in set(current) - set(values):
            if callable(current[key]) and not key.startswith("_abc"):
                changes.append(f"{label}.{key} was added")
                deleter(obj, key)


def _restore_instance(label, obj, changes):
    """Remove methods set on `obj` itself over its class's, and put back its callable traits."""
    try:
        items = list(vars(obj).items())
    except TypeError:  # no __dict__ (an extension type): nothing can be set on the instance
        items = []
    for key, value in items:
        if callable(value) and hasattr(type(obj), key) and not isinstance(value, type) and key != "_sys_modules_keys":
            if getattr(value, "__self__", None) is obj and getattr(value, "__func__", None) is getattr(type(obj), key, None):
                continue  # a bound method cached on the instance by the library itself
            changes.append(f"{label}'s {key} was replaced")
            delattr(obj, key)
    recorded = _state["traits"].get(id(obj), {})
    values = getattr(obj, "_trait_values", {})
    for key, value in recorded.items():
        if values.get(key) is not value:
            changes.append(f"{label}'s {key} was replaced")
            values[key] = value


def check():
    """Put back everything :func:`snapshot` and :func:`remember` recorded; return what had changed (text)."""
    changes = []
    modules, names = _state["modules"], _state["names"]
    for name, value in _state["sys"].items():
        if getattr(sys, name) is not value:
            changes.append(f"sys.{name} was replaced")
            setattr(sys, name, value)
    for label, (module, recorded) in modules.items():
        if _modules.get(label) is not module:
            changes.append(f"sys.modules[{label!r}] was replaced")
            _modules[label] = module
        _restore_mapping(label, module, recorded, setattr, delattr, changes)
    for label, (cls, recorded) in _state["classes"].items():
        _restore_mapping(label, cls, recorded, type.__setattr__, type.__delattr__, changes)
    for owner, name, value in _state["links"]:
        if getattr(owner, name, None) is not value:
            changes.append(f"{type(owner).__name__}.{name} was replaced")
            setattr(owner, name, value)
    for label, obj in _state["instances"].items():
        _restore_instance(label, obj, changes)
    shell, namespace = _state["shell"], _state["shell"].user_ns
    for name, recorded in _state["shell_lists"].items():
        if list(getattr(shell, name, [])) != recorded:
            changes.append(f"IPython's {name} were changed")
            setattr(shell, name, list(recorded))
    if shell.custom_exceptions != _state["custom_exceptions"]:
        changes.append("IPython's exception handler was replaced (set_custom_exc)")
        shell.custom_exceptions = _state["custom_exceptions"]
    for event, callbacks in shell.events.callbacks.items():
        if list(callbacks) != _state["events"].get(event, []):
            changes.append(f"IPython's {event} callbacks were changed")
            callbacks[:] = _state["events"].get(event, [])
    if sys.meta_path != _state["meta_path"] or sys.path_hooks != _state["path_hooks"]:
        changes.append("Python's import machinery (sys.meta_path or sys.path_hooks) was changed")
        sys.meta_path[:], sys.path_hooks[:] = _state["meta_path"], _state["path_hooks"]
    if _gettrace() is not None or _getprofile() is not None:
        changes.append("a trace or profile function was installed (sys.settrace or sys.setprofile)")
        _settrace(None)
        _setprofile(None)
    for name, (value, parts) in names.items():
        if namespace.get(name) is not value:
            changes.append(f"{name} (defined by the notebook, not by you) was redefined")
            namespace[name] = value
        if parts is not None and not _same(_all_parts(value), parts):
            changes.append(f"the code, defaults or attributes of {name} (defined by the notebook) were changed")
            _put_back(value, parts)
    if namespace.get("__builtins__") not in (builtins, vars(builtins)):
        changes.append("__builtins__ was replaced")
        namespace["__builtins__"] = builtins
    started = [t.name for t in _threads() if t.ident not in _state["threads"] and t.is_alive() and not t.daemon]
    if started:
        changes.append(f"threads started by the notebook are still running: {', '.join(started)}")
    return changes


def after_test(names):
    """After a test cell: record the names it defines, then :func:`check`."""
    remember(names)
    return check()


def signed(key, seq, raised, changes):
    """The text of one answer to the grader: JSON of (seq, raised, changes), a space, and its HMAC under `key`."""
    body = _dumps([seq, raised, changes])
    return body + " " + _hmac_new(key.encode(), body.encode(), _sha256).hexdigest()


def install(key, entry_name, packages):
    """Start the guard in this kernel: the grader's entry point as builtins.<entry_name>, then :func:`snapshot`.

    `key` (the grader's, for this kernel) signs every answer. It is kept only
    in the entry point's closure, and the cell that brought it is dropped
    from linecache, where IPython keeps the source of every cell it ran.
    """
    last = {"raised": None}  # whether the last cell run for the notebook (not a silent one) raised
    counter = [0]

    def before_cell(info):
        last["raised"] = None

    def after_cell(result):
        last["raised"] = not result.success

    def entry(action, names=()):
        if action == "after_test":
            changes = after_test(list(names))
        elif action == "remember":
            remember(list(names))
            changes = []
        else:
            changes = check()
        counter[0] += 1
        return signed(key, counter[0], last["raised"], changes)

    shell = get_ipython()  # noqa: F821 (the kernel's global)
    shell.events.register("pre_run_cell", before_cell)
    shell.events.register("post_run_cell", after_cell)
    setattr(builtins, entry_name, entry)
    snapshot(packages)
    for cache in (linecache.cache, getattr(linecache, "_ipython_cache", {})):
        for name in [n for n, e in cache.items() if key in "".join(e[2] if len(e) > 2 else ())]:
            del cache[name]
