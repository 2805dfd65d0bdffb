"""Unit tests of the kernel guard's snapshot and check (no kernel: an in-process IPython shell stands in for it)."""
import sys
import types
from pathlib import Path

import numpy
import numpy.testing
import pytest
from IPython.core.interactiveshell import InteractiveShell

import autograde

GUARD_FILE = Path(autograde.__file__).parent / "run" / "guard.py"


@pytest.fixture
def guard():
    """The guard as the kernel runs it (its source in a fresh module, with get_ipython), after its snapshot."""
    shell = InteractiveShell.instance()
    module = types.ModuleType("guard_under_test")
    module.get_ipython = lambda: shell
    exec(compile(GUARD_FILE.read_text(), str(GUARD_FILE), "exec"), module.__dict__)
    genuine = (numpy.allclose, numpy.testing.assert_allclose.__defaults__)
    module.snapshot(["numpy"])
    try:
        yield module, shell
    finally:  # whatever the guard failed to put back, this does, for the other tests
        numpy.allclose = genuine[0]
        numpy.testing.assert_allclose.__defaults__ = genuine[1]
        sys.settrace(None)
        InteractiveShell.clear_instance()


def test_nothing_changed_nothing_reported(guard):
    module, _ = guard
    assert module.check() == []
    assert module.check() == []


def test_a_replaced_library_function_is_reported_and_put_back(guard):
    module, _ = guard
    genuine = numpy.allclose
    numpy.allclose = lambda *args, **kwargs: True
    changes = module.check()
    assert "numpy.allclose was replaced" in changes
    assert numpy.allclose is genuine
    assert module.check() == []  # put back: nothing left to report


def test_changed_defaults_of_a_library_function_are_reported_and_put_back(guard):
    module, _ = guard
    defaults = numpy.testing.assert_allclose.__defaults__
    numpy.testing.assert_allclose.__defaults__ = (1.0, 1.0) + defaults[2:]  # rtol and atol of 1: anything passes
    changes = module.check()
    assert any("assert_allclose were changed" in c for c in changes), changes
    assert numpy.testing.assert_allclose.__defaults__ == defaults


def test_a_redefined_test_helper_is_reported_and_put_back(guard):
    module, shell = guard

    def expect_close(actual, expected):
        assert numpy.allclose(actual, expected)

    shell.user_ns["expect_close"] = expect_close
    module.remember(["expect_close", "not_defined_by_the_notebook"])
    shell.user_ns["expect_close"] = lambda *args: None
    assert module.check() == ["expect_close (defined by the notebook, not by you) was redefined"]
    assert shell.user_ns["expect_close"] is expect_close


def test_a_swallowed_exception_and_a_trace_function_are_reported_and_removed(guard):
    module, shell = guard
    shell.set_custom_exc((BaseException,), lambda *args, **kwargs: None)
    sys.settrace(lambda *args: None)
    changes = module.check()
    assert "IPython's exception handler was replaced (set_custom_exc)" in changes
    assert "a trace or profile function was installed (sys.settrace or sys.setprofile)" in changes
    assert shell.custom_exceptions == () and sys.gettrace() is None


def test_after_test_records_what_the_test_defined_then_checks(guard):
    module, shell = guard
    shell.user_ns["oracle"] = sum
    assert module.after_test(["oracle"]) == []
    shell.user_ns["oracle"] = max
    assert module.check() == ["oracle (defined by the notebook, not by you) was redefined"]


def test_a_test_helper_whose_code_was_swapped_is_reported_and_put_back(guard):
    # The name still points at the notebook's function; its code, defaults and closure were changed in place.
    module, shell = guard
    tolerance = 1e-8

    def expect_close(actual, expected, atol=1e-8):
        assert numpy.allclose(actual, expected, atol=max(atol, tolerance))

    shell.user_ns["expect_close"] = expect_close
    module.remember(["expect_close"])
    genuine_code = expect_close.__code__
    def noop(actual, expected, atol=1e-8):
        return tolerance  # (a closure like the helper's: code objects swap only with as many free variables)

    expect_close.__code__ = noop.__code__
    expect_close.__defaults__ = (1e9,)
    changes = module.check()
    assert changes == ["the code, defaults or attributes of expect_close (defined by the notebook) were changed"]
    assert expect_close.__code__ is genuine_code and expect_close.__defaults__ == (1e-8,)
    expect_close.__closure__[0].cell_contents = 1e9  # the tolerance it closes over
    assert module.check() != [] and expect_close.__closure__[0].cell_contents == 1e-8
    with pytest.raises(AssertionError):
        expect_close([0.0], [1.0])


def test_a_method_set_on_the_display_hook_is_reported_and_removed(guard):
    # The messaging path: what a cell shows (and, in a kernel, sends) goes through these objects.
    module, shell = guard
    shell.displayhook.write_output_prompt = lambda: None
    shell.display_pub.publish = lambda *args, **kwargs: None
    changes = module.check()
    assert "the display hook's write_output_prompt was replaced" in changes, changes
    assert "the display publisher's publish was replaced" in changes, changes
    assert "publish" not in vars(shell.display_pub) and "write_output_prompt" not in vars(shell.displayhook)


def test_a_trace_function_hidden_behind_a_patched_sys_gettrace_is_still_found(guard):
    module, _ = guard
    genuine = sys.gettrace
    sys.settrace(lambda *args: None)
    sys.gettrace = lambda: None
    try:
        changes = module.check()
    finally:
        sys.gettrace = genuine
        sys.settrace(None)
    assert "a trace or profile function was installed (sys.settrace or sys.setprofile)" in changes, changes


def test_install_answers_only_through_a_signed_entry_point_with_no_module_to_find():
    import builtins
    import hashlib
    import hmac
    import json
    import linecache

    shell = InteractiveShell.instance()
    namespace = {"__builtins__": dict(vars(builtins)), "__name__": "autograde_guard", "get_ipython": lambda: shell}
    exec(compile(GUARD_FILE.read_text(), "autograde_guard", "exec"), namespace)
    key = "k3y" * 8
    linecache.cache["<cell that brought the key>"] = (1, None, [f"install({key!r})\n"], "<cell>")
    try:
        namespace["install"](key, "_ag_test_entry", ["numpy"])
        found = [m for m, v in list(sys.modules.items()) if getattr(v, "install", None) is namespace["install"]]
        assert not found, f"the guard is findable in sys.modules as {found}"
        assert "<cell that brought the key>" not in linecache.cache, "the key is still in linecache"
        answers = [builtins._ag_test_entry("check"), builtins._ag_test_entry("after_test", [])]
        for seq, answer in enumerate(answers, 1):
            body, mac = answer.rsplit(" ", 1)
            assert mac == hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest()
            assert json.loads(body) == [seq, None, []], body
        shell.run_cell("1 / 0")
        assert json.loads(builtins._ag_test_entry("check").rsplit(" ", 1)[0])[1] is True, "the error was not seen"
    finally:
        del builtins._ag_test_entry
        InteractiveShell.clear_instance()


def test_an_error_output_is_cut_as_it_arrives_and_kept():
    # (The grader's side: GuardedExecute.output.) A 5-million-character exception would be copied into every file
    # the grader writes; it is cut to a fifth of max_output_chars for the message and for the traceback.
    from autograde.run.execute import GuardedExecute

    executor = GuardedExecute(max_output_chars=1000)
    executor._cut, executor._chars, executor.clear_before_next_output = set(), {}, False
    message = "A" * 5_000_000
    msg = {"msg_type": "error", "header": {"msg_type": "error"}, "parent_header": {}, "metadata": {},
           "content": {"ename": "ValueError", "evalue": message, "traceback": ["Traceback:", f"ValueError: {message}"]}}
    outs = []
    executor.output(outs, msg, None, 0)
    assert len(outs) == 1 and outs[0]["output_type"] == "error" and outs[0]["ename"] == "ValueError", outs
    assert len(outs[0]["evalue"]) < 300 and sum(map(len, outs[0]["traceback"])) < 300, \
        (len(outs[0]["evalue"]), sum(map(len, outs[0]["traceback"])))
