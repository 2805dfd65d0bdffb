"""The checker's modules lent to the kernel, the student's parameters changed from the checker, one random stream.

A forked process plays the kernel (autograde/run/agent.py's KernelSide over a socket, as in a real kernel) and
this one the checker (autograde/run/checker.py's CheckerSide): what crosses is what crosses when grading.
"""
import os
import socket

import pytest

pytestmark = pytest.mark.slow  # (a forked kernel with torch: about 10 s)
torch = pytest.importorskip("torch")
nn = torch.nn


class Oracle(nn.Module):
    """A module of the checker's (as the tests' correct AdditiveAttention is): lent to the kernel's training."""

    def __init__(self, d):
        super().__init__()
        self.W_q, self.W_k, self.w_v = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False), nn.Linear(d, 1)

    def forward(self, q, k, mask=None):
        scores = self.w_v(torch.tanh(self.W_q(q).unsqueeze(2) + self.W_k(k).unsqueeze(1))).squeeze(-1)
        weights = torch.softmax(scores, -1)
        return weights @ k, weights


def train(make, steps=30):
    """The kernel's training loop (as a notebook's given train_reversal): a model of its own around make(8)."""
    torch.manual_seed(0)
    encoder = nn.Linear(8, 8)
    attention = make(8)
    optimizer = torch.optim.Adam(list(encoder.parameters()) + list(attention.parameters()), lr=1e-2)
    losses = []
    for _ in range(steps):
        x = encoder(torch.randn(4, 5, 8))
        context, _ = attention(x[:, :2], x)
        loss = (context - 1).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, [p.detach().clone() for p in attention.parameters()]


def run_twice(module):
    """The kernel runs a lent module with and without gradients: (output with gradients on, output under no_grad)."""
    x = torch.ones(1, 2, 8)
    with torch.no_grad():
        quiet = module(x, x)[0]
    return module(x, x)[0].detach(), quiet


def draws(n):
    return torch.randn(n)


@pytest.fixture
def kernel():
    """A forked 'kernel' serving its namespace; yields the checker's side of the connection."""
    from autograde.run.checker import _DONE, CheckerSide

    namespace = {"train": train, "draws": draws, "run_twice": run_twice, "layer": nn.Linear(3, 2), "hooked": hooked,
                 "peeks": peeks,
                 "Linear": nn.Linear}
    mine, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # the kernel: answer until the checker says done
        code = 0
        mine.close()
        # One thread: a fork inherits no OpenMP workers, and a parallel region here would wait for them forever
        # (the parent process of the test run may have started its pool in an earlier test).
        torch.set_num_threads(1)
        try:
            from autograde.run.agent import KernelSide

            side = KernelSide(type("Shell", (), {"user_ns": namespace})())
            side.conn = theirs
            side.serve_until_done()
        except BaseException:
            code = 1
        os._exit(code)
    theirs.close()  # (so that a kernel that dies is seen as gone, not waited for)
    side = CheckerSide(None)
    side.conn = mine
    side.sync_random = True
    names = side.request("lookup", None, names=sorted(namespace))
    yield side, names
    mine.sendall(_DONE)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_lent_module_trains_in_the_kernel_as_it_would_have_there(kernel):
    _, names = kernel
    here_losses, here_parameters = train(Oracle)
    losses, parameters = names["train"](Oracle)
    # Gradients reach the lent module's parameters (held by the kernel, updated by its optimiser) and flow back
    # through it to the kernel's own encoder: the same losses as the same training in one process.
    assert losses[-1] < losses[0] / 2
    assert losses == pytest.approx(here_losses, rel=1e-5, abs=1e-7)
    for got, expected in zip(parameters, here_parameters):
        assert torch.allclose(got, expected, atol=1e-5)


def test_a_lent_module_runs_the_same_with_gradients_and_without(kernel):
    side, names = kernel
    torch.manual_seed(3)
    module = Oracle(8)
    with_grad, quiet = names["run_twice"](module)
    expected = module(torch.ones(1, 2, 8), torch.ones(1, 2, 8))[0].detach()
    assert torch.allclose(with_grad, expected) and torch.allclose(quiet, expected)
    # A change a test makes here, in place, is what the kernel's mirror runs with next (and then holds).
    with torch.no_grad():
        module.w_v.bias.fill_(10.0)
        module.W_q.weight.zero_()
    _, quiet = names["run_twice"](module)
    assert torch.allclose(quiet, module(torch.ones(1, 2, 8), torch.ones(1, 2, 8))[0].detach())


def test_a_change_to_a_students_parameter_here_is_made_in_the_kernel(kernel):
    side, names = kernel
    layer = names["layer"]
    assert isinstance(layer, nn.Linear) and isinstance(layer.weight, nn.Parameter)
    with torch.no_grad():
        layer.weight.zero_()
        layer.weight[1, 2] = 5.0
        layer.bias.copy_(torch.tensor([1.0, -1.0]))
    # The kernel's layer computes with the changed values.
    assert layer(torch.ones(1, 3)).tolist() == [[1.0, 4.0]]
    # A computation here on the parameter gives a plain tensor and changes nothing there.
    doubled = layer.weight * 2
    assert type(doubled) is torch.Tensor and layer(torch.ones(1, 3)).tolist() == [[1.0, 4.0]]


def test_isinstance_against_a_class_of_the_kernels_is_asked_there(kernel):
    _, names = kernel
    assert isinstance(names["layer"], names["Linear"])
    assert not isinstance(Oracle(2), names["Linear"])


def test_one_random_stream_runs_through_both_processes(kernel):
    _, names = kernel
    torch.manual_seed(11)
    first, theirs, last = torch.randn(3), names["draws"](2), torch.randn(2)
    torch.manual_seed(11)
    assert torch.equal(first, torch.randn(3)) and torch.equal(theirs, torch.randn(2))
    assert torch.equal(last, torch.randn(2))


def hooked(module):
    """The kernel's code hooks a child of a lent module (as a student's TinyGPT collects weights): what it saw."""
    seen = []
    module.W_q.register_forward_hook(lambda mod, inputs, output: seen.append(output.detach().clone()))
    module.w_v.register_forward_pre_hook(lambda mod, inputs: seen.append(inputs[0].shape))
    module(torch.ones(1, 2, 8), torch.ones(1, 3, 8))
    return seen


def test_hooks_on_a_lent_modules_children_run_as_the_checkers_module_runs(kernel):
    side, names = kernel
    torch.manual_seed(5)
    module = Oracle(8)
    seen = names["hooked"](module)
    assert len(seen) == 2, seen
    assert torch.allclose(seen[0], module.W_q(torch.ones(1, 2, 8)).detach())
    assert tuple(seen[1]) == (1, 2, 3, 8)


def test_a_students_parameter_is_the_same_object_each_time(kernel):
    _, names = kernel
    layer = names["layer"]
    assert layer.weight is layer.weight and {id(p) for p in layer.parameters()} == {id(layer.weight), id(layer.bias)}


def peeks(lent):
    """The kernel's code asks the checker, bypassing the proxy, for what it must not have or change."""
    ask = object.__getattribute__(lent, "_ask")
    said = []
    for op, fields in (("getattr", {"name": "__globals__"}), ("getattr", {"name": "__code__"}),
                       ("setattr", {"name": "forward", "value": 1}), ("setitem", {"key": 0, "value": 1})):
        try:
            ask(op, **fields)
            said.append("given")
        except Exception as error:
            said.append(type(error).__name__)
    return said


def test_the_kernel_cannot_look_into_or_change_what_the_checker_lends(kernel):
    _, names = kernel
    expected_value = [0.25, 0.75]  # (what a test's namespace holds)

    def oracle(x):
        return expected_value

    assert names["peeks"](oracle) == ["PermissionError"] * 4
    assert names["run_twice"](Oracle(8))[1].shape == (1, 2, 8)  # (lent modules still work)
