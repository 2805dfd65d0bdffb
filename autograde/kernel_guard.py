"""Runs inside the student's kernel: undo monkeypatching of what the tests rely on, and report it.

:class:`autograde.execute.GuardedExecute` sends this file's source to each
kernel before the first cell and calls :func:`check` before and after every
test cell. :func:`snapshot` records, before any student code runs, the
functions the tests compare with (numpy, torch, math, hypothesis, builtins),
the classes whose methods the tests call (``torch.Tensor``, ``nn.Module``...),
IPython's execution machinery and the names that provided cells define;
:func:`check` puts back anything changed since and names it. A test cell
therefore always runs with the genuine functions, and one during which
student code changed them is not trusted.

This stops a submission from patching ``np.allclose``, the defaults of
``np.testing.assert_allclose``, ``builtins``, IPython's exception handling or
the notebook's test helpers. It is not a security boundary: code in the same
process can always find this module. The sandbox is the boundary for files,
grades and the network.
"""
import builtins
import os
import sys
import threading
import types

MODULES = [
    "builtins", "math", "numpy", "numpy.testing", "numpy.testing._private.utils", "numpy._core.numeric",
    "numpy._core.fromnumeric", "numpy._core.umath", "numpy.linalg", "torch", "torch.testing",
    "torch.testing._comparison", "torch.nn", "torch.nn.functional", "torch.nn.modules.module",
    "torch.nn.modules.linear", "torch.nn.modules.activation", "hypothesis", "hypothesis.strategies",
    "IPython.core.interactiveshell", "ipykernel.ipkernel", "ipykernel.kernelbase", "ipykernel.zmqshell",
]
CLASSES = [
    ("torch", "Tensor"), ("torch.nn", "Module"), ("torch.nn", "Linear"), ("torch.nn", "MultiheadAttention"),
    ("IPython.core.interactiveshell", "InteractiveShell"), ("ipykernel.zmqshell", "ZMQInteractiveShell"),
    ("ipykernel.ipkernel", "IPythonKernel"), ("ipykernel.kernelbase", "Kernel"), ("builtins", "BaseException"),
]
# Entries that IPython itself swaps in and out around each execution.
UNGUARDED = {"builtins": {"input", "raw_input", "get_ipython", "display", "__IPYTHON__", "exit", "quit", "help", "_"}}
SHELL_LISTS = ["ast_transformers", "input_transformers_cleanup", "input_transformers_post"]

_state = {}


def _function_parts(value):
    """What monkeypatching can change inside a Python function without rebinding it."""
    return (value.__code__, value.__defaults__, dict(value.__kwdefaults__ or {}))


def _record(mapping):
    """A shallow copy of `mapping`, with the code and defaults of each Python function in it."""
    values = dict(mapping)
    parts = {k: _function_parts(v) for k, v in values.items() if isinstance(v, types.FunctionType)}
    return values, parts


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
        module = sys.modules.get(name)
        if module is None and name.split(".")[0] in sys.modules:
            try:
                module = importlib.import_module(name)
            except Exception:
                module = None
        if module is not None:
            entries = {k: v for k, v in vars(module).items() if k not in UNGUARDED.get(name, ())}
            modules[name] = (module, _record(entries))
    classes = {}
    for module_name, class_name in CLASSES:
        cls = getattr(sys.modules.get(module_name), class_name, None)
        if isinstance(cls, type):
            classes[f"{module_name}.{class_name}"] = (cls, _record(vars(cls)))
    shell = get_ipython()  # noqa: F821 (the kernel's global)
    _state.update(
        modules=modules, classes=classes, shell=shell, kernel=getattr(shell, "kernel", None),
        shell_lists={n: list(getattr(shell, n, [])) for n in SHELL_LISTS},
        custom_exceptions=shell.custom_exceptions, events={k: list(v) for k, v in shell.events.callbacks.items()},
        meta_path=list(sys.meta_path), path_hooks=list(sys.path_hooks), excepthook=sys.excepthook,
        threads={t.ident for t in threading.enumerate()}, names={},
    )


def remember(names):
    """Record the current values of `names` in the user namespace: provided cells defined them."""
    namespace = _state["shell"].user_ns
    for name in names:
        if name in namespace:
            _state["names"][name] = namespace[name]


def _library_code(value, label):
    """Whether `value` is a function whose code lives in the package that `label` names (a library's own rewrap).

    torch, for one, replaces some of its functions with wrapped versions when
    a submodule is first imported (``torch.manual_seed`` by torch._dynamo).
    """
    package = sys.modules.get(label.split(".")[0])
    folder = getattr(package, "__path__", [None])[0]
    code = getattr(value, "__code__", None)
    return bool(folder and code and os.path.realpath(code.co_filename).startswith(os.path.realpath(folder) + os.sep))


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
        elif key in parts and _function_parts(value) != parts[key]:
            changes.append(f"the code or defaults of {label}.{key} were changed")
            value.__code__, value.__defaults__, value.__kwdefaults__ = parts[key][0], parts[key][1], parts[key][2] or None
    if isinstance(obj, type):
        for key in set(current) - set(values):
            if callable(current[key]) and not key.startswith("_abc"):
                changes.append(f"{label}.{key} was added")
                deleter(obj, key)


def check():
    """Put back everything :func:`snapshot` and :func:`remember` recorded; return what had changed (text)."""
    changes = []
    modules, names = _state["modules"], _state["names"]
    for label, (module, recorded) in modules.items():
        if sys.modules.get(label) is not module:
            changes.append(f"sys.modules[{label!r}] was replaced")
            sys.modules[label] = module
        _restore_mapping(label, module, recorded, setattr, delattr, changes)
    for label, (cls, recorded) in _state["classes"].items():
        _restore_mapping(label, cls, recorded, type.__setattr__, type.__delattr__, changes)
    shell, namespace = _state["shell"], _state["shell"].user_ns
    for obj, label in ((shell, "the IPython shell"), (_state["kernel"], "the kernel")):
        for key, value in list(vars(obj).items() if obj is not None else []):
            if callable(value) and hasattr(type(obj), key) and not isinstance(value, type) and key != "_sys_modules_keys":
                if getattr(value, "__self__", None) is obj and getattr(value, "__func__", None) is getattr(type(obj), key, None):
                    continue  # a bound method cached on the instance by the library itself
                changes.append(f"{label}'s {key} was replaced")
                delattr(obj, key)
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
    if sys.gettrace() is not None or sys.getprofile() is not None:
        changes.append("a trace or profile function was installed (sys.settrace or sys.setprofile)")
        sys.settrace(None)
        sys.setprofile(None)
    for name, value in names.items():
        if namespace.get(name) is not value:
            changes.append(f"{name} (defined by the notebook, not by you) was redefined")
            namespace[name] = value
    if namespace.get("__builtins__") not in (builtins, vars(builtins)):
        changes.append("__builtins__ was replaced")
        namespace["__builtins__"] = builtins
    started = [t.name for t in threading.enumerate() if t.ident not in _state["threads"] and t.is_alive()
               and not t.daemon]
    if started:
        changes.append(f"threads started by the notebook are still running: {', '.join(started)}")
    return changes


def after_test(names):
    """After a test cell: record the names it defines, then :func:`check`."""
    remember(names)
    return check()
