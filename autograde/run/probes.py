"""Measurements that must run where the student's autograd graph is: in the kernel, on the student's function.

The grader sends this file's source into each kernel with :mod:`autograde.run.agent`, which runs a probe when
the checker asks (``{"op": "probe", "name": ...}``) and returns what it measured as data; the checker runs the
same function itself on objects of its own (a reference). A notebook gives the same helpers to the student
(``gradients_of``, ``saved_by``, ``gradcheck_of``, ``largest_operation_of``, ``left_alive_by``, ``held_by``), so
that a test reads the same in the student's copy.

What a probe returns is measured inside the student's process, which the student's code could patch (torch
itself); it is what the student's code does, as autograd there sees it, never a value of the tests'.
"""


def _leaves(args, wrt):
    torch = __import__("torch")
    args = list(args)
    for i in wrt:
        args[i] = torch.as_tensor(args[i]).detach().requires_grad_(True)
    return args


def gradients(target, args, wrt=(), pick=0, cotangent=None, kwargs=None):
    """The gradients of ``target(*args, **kwargs)[pick]`` (the whole output if `pick` is None), summed or against
    `cotangent`, with respect to ``args[i]`` for each i in `wrt` and to the parameters of `target` if it is a
    module: (the output, [gradient of each of those args], {parameter name: gradient}); None where none reaches."""
    torch = __import__("torch")
    args = _leaves(args, wrt)
    out = target(*args, **(kwargs or {}))
    first = out if pick is None else out[pick]
    if isinstance(first, (tuple, list)):  # every output: the gradients of the sum of all of them
        first = sum(t.sum() for t in first)
    named = list(target.named_parameters()) if isinstance(target, torch.nn.Module) else []
    leaves = [args[i] for i in wrt] + [p for _, p in named]
    if not leaves:
        return out, [], {}
    if cotangent is None:
        found = torch.autograd.grad(first.sum(), leaves, allow_unused=True)
    else:
        found = torch.autograd.grad(first, leaves, grad_outputs=cotangent, allow_unused=True)
    return out, list(found[:len(wrt)]), {name: g for (name, _), g in zip(named, found[len(wrt):])}


def _tensors_in(value, path, found, depth=0):
    """Every tensor in `value`, walked through lists, tuples, dicts and objects' attributes (4 levels), by path."""
    torch = __import__("torch")
    if torch.is_tensor(value):
        found[path] = value.detach()
    elif depth < 4 and isinstance(value, (list, tuple)):
        for i, item in enumerate(value[:1000]):
            _tensors_in(item, f"{path}[{i}]", found, depth + 1)
    elif depth < 4 and isinstance(value, dict):
        for key, item in list(value.items())[:1000]:
            _tensors_in(item, f"{path}[{key!r}]", found, depth + 1)
    elif depth < 4 and hasattr(value, "__dict__") and not callable(value) and not isinstance(value, type):
        for key, item in list(vars(value).items())[:1000]:
            _tensors_in(item, f"{path}.{key}", found, depth + 1)


def saved_by(target, args, wrt=(), kwargs=None):
    """What autograd keeps for the backward pass of ``target(*args, **kwargs)`` (``args[i]`` for i in `wrt` made
    leaves that require grad): (the output, [every tensor the pack hook of saved_tensors_hooks received, in
    order], {path: tensor} of every tensor held in the attributes of the output's grad_fn, walked)."""
    torch = __import__("torch")
    args = _leaves(args, wrt)
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t.detach()) or t, lambda t: t):
        out = target(*args, **(kwargs or {}))
    held = {}
    grad_fn = getattr(out, "grad_fn", None)
    if grad_fn is not None:
        for key, value in list(vars(grad_fn).items()) if hasattr(grad_fn, "__dict__") else ():
            _tensors_in(value, f"ctx.{key}", held)
    return out, saved, held


def gradcheck_of(target, args, kwargs=None, **options):
    """``torch.autograd.gradcheck`` of ``lambda *a: target(*a, **kwargs)`` at `args` (every floating one a leaf
    that requires grad): True, or the GradcheckError (a RuntimeError) it raises."""
    torch = __import__("torch")
    inputs = tuple(torch.as_tensor(a).detach().requires_grad_(True) if torch.is_floating_point(torch.as_tensor(a))
                   else a for a in args)
    return torch.autograd.gradcheck(lambda *a: target(*a, **(kwargs or {})), inputs, **options)


def largest_operation(target, args, wrt=(), kwargs=None):
    """The largest tensor any operation outputs while ``target(*args, **kwargs)`` runs forward and backward (the
    gradients of the sum of its output with respect to ``args[i]`` for each i in `wrt`), as PyTorch dispatches
    them (a ``TorchDispatchMode``: what runs inside one kernel is not seen): (its number of elements, the
    operation's name)."""
    torch = __import__("torch")
    dispatch = __import__("torch.utils._python_dispatch", fromlist=["TorchDispatchMode"])

    class Largest(dispatch.TorchDispatchMode):
        most = (0, "")

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in (out if isinstance(out, (tuple, list)) else (out,)):
                if isinstance(t, torch.Tensor) and t.numel() > self.most[0]:
                    self.most = (t.numel(), str(func))
            return out

    args = _leaves(args, wrt)
    with Largest() as seen:
        out = target(*args, **(kwargs or {}))
        first = out[0] if isinstance(out, (tuple, list)) else out
        leaves = [args[i] for i in wrt]
        if leaves:
            torch.autograd.grad(first.sum(), leaves, allow_unused=True)
    return seen.most


def left_alive(target, args, wrt=(), kwargs=None):
    """What ``target(*args, **kwargs)`` (``args[i]`` for i in `wrt` made leaves that require grad) leaves alive:
    every tensor an operation takes or outputs while it runs is held by a weak reference (a ``TorchDispatchMode``,
    which sees the operations PyTorch dispatches; a tensor no operation touches is not seen), so a cache filled by
    an earlier call is seen when this call reads it; once it has returned and ``gc.collect()`` has run, with only
    its output and its arguments held, [(operation, shape, elements of its storage, storage number, whose storage:
    "input i", "output" or "new")] for each one still alive. Tensors of one storage share its number, so a storage
    is counted once."""
    gc = __import__("gc")
    weakref = __import__("weakref")
    torch = __import__("torch")
    dispatch = __import__("torch.utils._python_dispatch", fromlist=["TorchDispatchMode"])

    class Created(dispatch.TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.refs = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            flat = []
            for value in (*args, *(kwargs or {}).values(), *(out if isinstance(out, (tuple, list)) else (out,))):
                flat.extend(value if isinstance(value, (tuple, list)) else (value,))
            self.refs.extend((str(func), weakref.ref(t)) for t in flat if isinstance(t, torch.Tensor))
            return out

    args = _leaves(args, wrt)
    with Created() as seen:
        out = target(*args, **(kwargs or {}))
    gc.collect()
    owners = {}
    for i, a in enumerate(args):
        if torch.is_tensor(a):
            owners.setdefault(a.untyped_storage().data_ptr(), f"input {i}")
    for t in out if isinstance(out, (tuple, list)) else (out,):
        if torch.is_tensor(t):
            owners.setdefault(t.untyped_storage().data_ptr(), "output")
    alive, numbers = [], {}
    for operation, ref in seen.refs:
        t = ref()
        if t is None:
            continue
        storage = t.untyped_storage()
        number = numbers.setdefault(storage.data_ptr(), len(numbers))
        alive.append((operation, tuple(t.shape), storage.nbytes() // max(t.element_size(), 1), number,
                      owners.get(storage.data_ptr(), "new")))
        del t
    return alive


def held_by(target, limit=100_000):
    """What `target` holds, measured where it lives: every tensor and array reachable from it through objects'
    attributes (``__dict__`` and ``__slots__``), lists, tuples, dicts (keys and values), sets and deques, each
    object once (a cycle ends), `limit` objects at most; functions, classes and modules are not walked. [(path,
    dtype, shape, elements, floating)] for each, a Python float as one floating element of shape (). Views of one
    storage count the elements they cover once: a tensor's entry counts only the elements no earlier view covered
    (a view of more than a million elements counts whole)."""
    torch = __import__("torch")
    np = __import__("numpy")
    types = __import__("types")
    collections = __import__("collections")
    skipped = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)
    found, seen, views, stack = [], set(), {}, [("", target)]
    while stack and len(seen) < limit:
        path, value = stack.pop()
        if id(value) in seen or isinstance(value, (str, bytes, int, bool, type(None)) + skipped):
            continue
        seen.add(id(value))
        if torch.is_tensor(value):
            floating = bool(value.is_floating_point() or value.is_complex())
            new = int(value.numel())
            if 0 < new <= 1_000_000:  # the storage offsets this view covers, less those an earlier view covered
                offsets = torch.tensor(value.storage_offset())
                for size, stride in zip(value.shape, value.stride()):
                    offsets = offsets.unsqueeze(-1) + torch.arange(size) * stride
                storage = (value.untyped_storage().data_ptr(), str(value.dtype))
                covered = views.setdefault(storage, set())
                fresh = set(offsets.flatten().tolist()) - covered
                covered |= fresh
                new = len(fresh)
            if new:
                found.append([path, str(value.dtype), list(value.shape), new, floating])
        elif isinstance(value, np.ndarray):
            found.append([path, str(value.dtype), list(value.shape), int(value.size), value.dtype.kind in "fc"])
        elif isinstance(value, (float, complex, np.floating, np.complexfloating)):
            found.append([path, type(value).__name__, [], 1, True])
        elif isinstance(value, dict):
            stack.extend((f"{path}[{key!r}]", item) for key, item in list(value.items()))
            stack.extend((f"{path}.keys()", key) for key in list(value))
        elif isinstance(value, (list, tuple, collections.deque)):
            stack.extend((f"{path}[{i}]", item) for i, item in enumerate(list(value)))
        elif isinstance(value, (set, frozenset)):
            stack.extend((f"{path}{{...}}", item) for item in list(value))
        else:
            attributes = dict(getattr(value, "__dict__", None) or {})
            for klass in type(value).__mro__:
                slots = klass.__dict__.get("__slots__", ())
                for name in (slots,) if isinstance(slots, str) else slots:
                    if name not in attributes and name not in ("__dict__", "__weakref__") and hasattr(value, name):
                        attributes[name] = getattr(value, name)
            stack.extend((f"{path}.{name}", item) for name, item in attributes.items())
    return found


PROBES = {"gradients": gradients, "saved_by": saved_by, "gradcheck_of": gradcheck_of,
          "largest_operation": largest_operation, "left_alive": left_alive, "held_by": held_by}
