"""The checker's modules lent to the kernel, and the student's parameters as the checker holds them.

Where a test lends the student's code a correct module of its own (a correct
earlier exercise's, so that one mistake costs its points once), the kernel
mirrors it and asks the checker for its forward with its parameters' values,
and for the gradients of a forward it kept (:class:`LentModules`, a part of
:class:`autograde.run.checker.CheckerSide`). A student's parameter that comes
to the checker is a :func:`kernel_parameter_class` instance linked to the
kernel's own, so a change a test makes to it in place is made there too.
"""
from __future__ import annotations


class LentModules:
    """The forward and backward passes of the checker's modules lent to the kernel, and the student's parameters
    (the methods :class:`autograde.run.checker.CheckerSide` answers the kernel's requests with)."""

    def _lent_forward(self, module, field):
        import torch

        updates = []  # the parameters a test changed here since the kernel last had them: the kernel takes these
        for owner in module.modules():
            for name, p in owner._parameters.items():
                if p is not None and self.synced.get(id(p), p._version) != p._version:
                    updates.append([owner, name, p.detach().clone()])
                    self.synced[id(p)] = p._version
        changed = {(id(owner), name) for owner, name, _ in updates}
        for ident, name, value in field("params") or []:
            owner = self._resolve({self.export: ident})
            p = owner._parameters.get(str(name)) if isinstance(owner, torch.nn.Module) else None
            if p is not None and (id(owner), name) not in changed:
                p.data = torch.as_tensor(value)
                self.synced[id(p)] = p._version
        module.train(bool(field("training")))
        args, kwargs = list(field("args") or ()), dict(field("kwargs") or {})
        graph, wanted = bool(field("graph")), list(field("wanted") or [])
        inputs = []
        for i, a in enumerate(args):
            if torch.is_tensor(a):
                inputs.append(("a", i))
        inputs += [("k", k) for k, v in kwargs.items() if torch.is_tensor(v)]
        leaves_in = []
        for (kind, i), want in zip(inputs, wanted):
            holder = args if kind == "a" else kwargs
            if want and graph and (holder[i].is_floating_point() or holder[i].is_complex()):
                holder[i] = holder[i].detach().requires_grad_(True)
            leaves_in.append(holder[i])
        # Hooks the student's code put on the kernel's mirrors (of this module or its children) run where the
        # checker's module runs: each is a call back to the kernel with the inputs and the output, as data.
        handles = []
        for ident, pre, post in field("hooked") or []:
            real = self._resolve({self.export: ident})
            if not isinstance(real, torch.nn.Module):
                continue
            if pre:
                handles.append(real.register_forward_pre_hook(
                    lambda _, inputs, ident=ident: self.request("lent_hooks", None, mirror=ident, inputs=inputs)))
            if post:
                handles.append(real.register_forward_hook(
                    lambda _, inputs, output, ident=ident: self.request("lent_hooks", None, mirror=ident,
                                                                        inputs=inputs, output=output)))
        try:
            with torch.enable_grad() if graph else torch.no_grad():
                out = module(*args, **kwargs)
        finally:
            for handle in handles:
                handle.remove()
        if not graph:
            return {"out": out, "updates": updates}
        leaves: list = []
        layout = _layout(out, leaves)
        params = [self._resolve({self.export: ident})._parameters.get(str(name)) for ident, name in field("order") or []]
        self.graph_count += 1
        self.graphs[self.graph_count] = (leaves, leaves_in, params)
        while len(self.graphs) > 4096:  # forwards whose backward never came (evaluation with gradients on)
            self.graphs.pop(next(iter(self.graphs)))
        return {"leaves": [t.detach() for t in leaves], "layout": layout, "graph": self.graph_count,
                "updates": updates}

    def _lent_backward(self, field):
        import torch

        leaves, inputs, params = self.graphs.pop(int(field("graph")), ((), (), ()))
        wanted = list(field("wanted") or [])
        grads = list(field("grads") or [])
        targets = list(inputs) + list(params)
        asked = [i for i, t in enumerate(targets) if i < len(wanted) and wanted[i] and t is not None
                 and t.requires_grad]
        pairs = [(out, g) for out, g in zip(leaves, grads) if g is not None and out.requires_grad]
        found = [None] * len(wanted)
        if asked and pairs:
            got = torch.autograd.grad([o for o, _ in pairs], [targets[i] for i in asked],
                                      [g.to(o.dtype) for o, g in pairs], allow_unused=True)
            for i, g in zip(asked, got):
                found[i] = g
        return found

    def parameter(self, tensor, ref: dict):
        """A parameter of the student's module: its values, linked to it (:func:`kernel_parameter_class`). The same
        parameter is the same object each time it comes (``id(p)`` tells a model's parameters apart), with the
        values it came with last."""
        import torch

        ident = ref.get(self.imported) if isinstance(ref, dict) else None
        linked = self.parameters.get(ident)
        if linked is None or linked.dtype != tensor.dtype or linked.shape != tensor.shape:
            linked = kernel_parameter_class()(tensor.detach(), requires_grad=tensor.requires_grad)
            linked._wire_ref = self._resolve(ref)
            if ident is not None:
                self.parameters[ident] = linked
        else:
            with torch._C.DisableTorchFunctionSubclass(), torch.no_grad():
                linked.copy_(tensor)
        return linked


_IN_PLACE = frozenset(("__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__ipow__",
                       "__imatmul__"))
_NOT_A_CHANGE = frozenset(("requires_grad_", "share_memory_", "retain_grad", "detach_"))
_PARAMETER_CLASS: list = []


def kernel_parameter_class() -> type:
    """The class of the student's parameters here (made once torch is imported): ``nn.Parameter`` with the values
    the kernel sent, linked to the kernel's own; a change a test makes to one in place (``weight.zero_()``,
    ``weight[:4] = ...``, ``copy_``) is made to the student's parameter too, as it was when tests ran in the kernel.
    Anything else computed from it is a plain tensor of the checker's."""
    if _PARAMETER_CLASS:
        return _PARAMETER_CLASS[0]
    import torch

    class KernelParameter(torch.nn.Parameter):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            with torch._C.DisableTorchFunctionSubclass():
                result = func(*args, **(kwargs or {}))
                name = getattr(func, "__name__", "")
                changed = (name in _IN_PLACE or (name.endswith("_") and not name.startswith("_")
                                                 and name not in _NOT_A_CHANGE))
                target = args[0] if args else None
                if changed and isinstance(target, KernelParameter):
                    value = target.detach().clone().as_subclass(torch.Tensor)
                    target._wire_ref._ask("assign", value=value)
            return result

    _PARAMETER_CLASS.append(KernelParameter)
    return KernelParameter


def _layout(value, leaves: list):
    """`value`'s structure for the kernel, its tensors appended to `leaves` ("T" for each)."""
    import torch

    if torch.is_tensor(value):
        leaves.append(value)
        return "T"
    if isinstance(value, (list, tuple)):
        return {"list" if isinstance(value, list) else "tuple": [_layout(v, leaves) for v in value]}
    return {"value": value}
