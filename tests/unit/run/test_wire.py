"""What crosses between the kernel and the checker is data only (autograde/run/frames.py, wire.py), tested without a kernel."""
import socket
import threading

import numpy as np
import pytest

from autograde.run.wire import Closed, Endpoint, Proxy, RemoteError, WireError, decode, encode, receive, send


def roundtrip(value):
    blobs, handles = [], []
    tree = encode(value, blobs, lambda obj: handles.append(obj) or {"$handle": len(handles)})
    return decode(tree, blobs, lambda node: ("handle", node["$handle"])), handles


def test_data_comes_back_as_the_same_data_with_dtypes_kept():
    import torch  # (here, not at the top: the fast layer's other modules do not pay for importing it)

    value = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), 3: (1, 2.5, float("nan"), None, "x"),
             "t": torch.tensor([[1.0, 2.0]], dtype=torch.float64), "s": np.float32(1.5), "l": [True, -7, 2**70],
             "inf": -float("inf"), "slice": slice(1, None, 2), "dtype": np.dtype("int16"), "td": torch.float16}
    back, handles = roundtrip(value)
    assert handles == []
    assert back["a"].dtype == np.float32 and np.array_equal(back["a"], value["a"])
    assert back[3][:2] == (1, 2.5) and np.isnan(back[3][2]) and back[3][3:] == (None, "x")
    assert isinstance(back["t"], torch.Tensor) and back["t"].dtype == torch.float64 and torch.equal(back["t"], value["t"])
    assert back["s"] == np.float32(1.5) and back["s"].dtype == np.float32 and np.ndim(back["s"]) == 0
    assert float(roundtrip(np.float64(2.5))[0]) == 2.5 and roundtrip(np.zeros(()))[0].shape == ()
    assert back["l"] == [True, -7, 2**70] and back["inf"] == -float("inf") and back["slice"] == slice(1, None, 2)
    assert back["dtype"] == np.dtype("int16") and back["td"] is torch.float16


def test_a_state_dict_crosses_as_a_dict_of_its_tensors():
    # (A test that loads the grader's module's state into the student's sends module.state_dict(), an OrderedDict:
    # as a handle, the kernel's load_state_dict refused it.)
    from collections import OrderedDict

    import torch

    state = torch.nn.Linear(3, 2).state_dict()
    assert type(state) is OrderedDict
    back, handles = roundtrip(state)
    assert handles == [] and type(back) is dict and list(back) == ["weight", "bias"]
    assert all(torch.equal(back[k], state[k]) for k in state)


def test_an_ndarray_subclass_crosses_as_a_plain_array_and_what_is_not_data_as_a_handle():
    class Weights(np.ndarray):
        pass

    marker = object()
    back, handles = roundtrip([np.ones(3).view(Weights), np.array([marker], dtype=object), print, marker])
    assert type(back[0]) is np.ndarray and back[0].tolist() == [1.0, 1.0, 1.0]
    assert back[1:] == [("handle", 1), ("handle", 2), ("handle", 3)] and handles[1] is print and handles[2] is marker


def test_an_array_that_claims_an_object_dtype_or_a_wrong_size_is_refused():
    blobs = []
    tree = encode(np.zeros(2), blobs, None)
    for forged in ({**tree, "dtype": "|O"}, {**tree, "dtype": "V8"}, {**tree, "dtype": [("a", "<f8")]},
                   {**tree, "shape": [3]}, {**tree, "shape": [-2]}):
        with pytest.raises(WireError):
            decode(forged, [bytearray(b) for b in blobs], None)


def test_a_malformed_tree_is_refused():
    for tree in ({"$nothing": 1}, {"$float": "1e308"}, {"$torch_dtype": "Tensor"}, {"$dtype": "O"}):
        with pytest.raises((WireError, TypeError)):
            decode(tree, [], lambda node: None)


def test_a_frame_that_is_not_the_graders_is_refused():
    a, b = socket.socketpair()
    a.sendall(b"GET / HTTP/1.1\r\n\r\n")
    with pytest.raises(WireError):
        receive(b)
    a.close()
    with pytest.raises(Closed):
        receive(b)


def test_calls_attributes_and_exceptions_cross_as_data_both_ways():
    # The kernel's side exports a function and an object; the checker's calls them, lending a callback of its own.
    kernel_sock, checker_sock = socket.socketpair()
    kernel, checker = Endpoint("$handle", "$lent"), Endpoint("$lent", "$handle")
    kernel.conn, checker.conn = kernel_sock, checker_sock

    class Model:
        scale = 2.0

        def apply(self, x, f):
            return f(np.asarray(x) * self.scale)

    def student(x):
        if x < 0:
            raise ValueError("negative input\nsecond line")
        return np.full(2, x)

    thread = threading.Thread(target=kernel.serve_until_done)
    thread.start()
    function = Proxy(checker, checker._resolve({"$handle": kernel._handle(student)["$handle"]})._id, True)
    model = Proxy(checker, kernel._handle(Model())["$handle"], True)
    assert function(3.0).tolist() == [3.0, 3.0]
    with pytest.raises(ValueError) as caught:
        function(-1.0)
    assert isinstance(caught.value, RemoteError) and str(caught.value) == "negative input"
    assert model.scale == 2.0
    lent = []
    assert model.apply([1.0, 2.0], lambda y: lent.append(y) or float(y.sum())) == 6.0  # the callback ran here
    assert lent[0].tolist() == [2.0, 4.0]
    send(checker_sock, {"op": "done"})
    thread.join(5)
    assert not thread.is_alive()


def test_the_checker_looks_up_every_answer_a_cell_mentions_also_one_it_reassigns():
    from autograde.run.checker import _mentioned

    assert {"W_q", "np"} <= _mentioned("W_q = np.asarray(W_q)\n")
    assert "f" in _mentioned("def check():\n    return f(1)\n")
    assert _mentioned("x = globals()['name']") is None and _mentioned("def broken(:") is None
