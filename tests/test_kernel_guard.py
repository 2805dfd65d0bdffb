"""Unit tests of the kernel guard's snapshot and check (no kernel: an in-process IPython shell stands in for it)."""
import sys
import types
from pathlib import Path

import numpy
import numpy.testing
import pytest
from IPython.core.interactiveshell import InteractiveShell

import autograde

GUARD_FILE = Path(autograde.__file__).parent / "kernel_guard.py"


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
