"""Which cells a variant's fork runs (tests/support/slicing.py): every cell whose verdict it can change, and the
cells those read their state from; never a cell it cannot reach.

Each notebook here is a list of code cells; the variant replaces cell 1.
"""
from tests.support.slicing import cell_names, cells_to_run

SETUP = "import numpy as np\nX = np.ones(3)\nmodel = None"


def run(cells: list[str], replaced: int = 1, reference: str | None = None) -> set[int] | None:
    """The plan of a variant that replaces cell `replaced` of `cells`; the reference's cell is `reference` (default:
    the same code)."""
    return cells_to_run(cells, {replaced}, [reference if i == replaced and reference else c for i, c in enumerate(cells)])


def test_a_cell_that_never_reads_the_changed_function_is_left_to_the_reference():
    cells = [SETUP, "def f(x):\n    return x + 1", "assert f(1) == 2", "def g(x):\n    return 2 * x",
             "for _ in range(10**6):\n    pass\nassert g(2) == 4"]
    assert run(cells) == {1, 2}


def test_a_cell_that_reaches_it_through_a_helper_is_run():
    # The helper, defined before the variant, looks `f` up when called; a lambda and a class body do too.
    cells = ["def check():\n    return f(1)\nlater = lambda: f(2)\nclass Uses:\n    value = staticmethod(lambda: f(3))",
             "def f(x):\n    return x", "assert check() == 2", "assert later() == 3", "assert Uses.value() == 4",
             "assert True"]
    assert run(cells) == {1, 2, 3, 4}


def test_a_name_read_as_a_string_through_globals_counts():
    cells = ["def swap(references):\n    globals().update(references)",
             "def f(x):\n    return x", "swap({'f': abs})", "print('f')"]
    assert run(cells) == {1, 2}, "the call through globals() reads 'f'; a bare print of the word does not"


def test_the_cells_a_run_cell_reads_its_state_from_are_run_too():
    cells = [SETUP, "def f(m):\n    return m", "model = [0.0] * 3\nfor i in range(3):\n    model[i] = i",
             "trained = list(model)", "assert f(trained) == [0, 1, 2]", "assert len(model) == 3"]
    # Cell 4 calls f with `trained`, which cell 3 built from `model`, which cell 2 built: all three run; cell 5
    # reads `model` only, which nothing the variant touched has changed.
    assert run(cells) == {1, 2, 3, 4}


def test_an_object_the_changed_code_may_change_in_place_stays_changed():
    cells = [SETUP, "def f(x):\n    x += 1\n    return x", "y = f(X)", "assert X.sum() == 3"]
    assert run(cells) == {1, 2, 3}, "f(X) may have changed X in place: the cell reading X later must run"


def test_a_clean_cell_that_binds_a_name_again_ends_the_change():
    cells = [SETUP, "def f(x):\n    return x", "out = f(1)", "out = 5", "assert out == 5"]
    assert run(cells) == {1, 2}


def test_a_binding_that_may_not_happen_does_not_end_the_change():
    # Cell 3 may bind `out` again or not: cell 4 reads it, so both run (the fork's `out` is then what the grader's is).
    cells = [SETUP, "def f(x):\n    return x", "out = f(1)", "if X.sum() > 100:\n    out = 5", "assert out == 1"]
    assert run(cells) == {1, 2, 3, 4}


def test_a_test_that_only_uses_its_own_names_is_not_tied_to_a_changed_one_of_the_same_name():
    # Test cells bind throwaway names (`out`, `w`, a loop's `q`, `k`); a later one that binds before reading them is
    # not reading the changed ones.
    cells = [SETUP, "def f(x):\n    return x", "out, w = f(1), f(2)",
             "for q in range(3):\n    k = q * 2\n    assert k == 2 * q\nwith open(__file__) as out:\n    pass\n"
             "try:\n    w = 1\nexcept ValueError as error:\n    print(error)\nassert w == 1"]
    assert run(cells) == {1, 2}


def test_an_import_a_builtin_or_a_class_passed_along_is_not_a_change():
    cells = [SETUP + "\nimport math", "class Net:\n    pass\ndef f(x):\n    return isinstance(x, (float, Net))",
             "assert f(math.pi) and isinstance(Net(), Net)", "assert math.sqrt(4) == 2 and float(1) == 1.0"]
    assert run(cells) == {1, 2}


def test_a_magic_is_read_as_ipython_runs_it_and_an_unreadable_cell_runs_everything():
    assert {"f"} <= cell_names("%time y = f(1)").loads
    assert run([SETUP, "def f(x):\n    return x", "assert f(1) == 1", "def (:", "print(1)"]) is None


def test_a_stub_that_binds_nothing_changes_what_the_reference_binds():
    # The notebook as released: the answer cell raises NotImplementedError and binds none of the reference's names,
    # so a test reading `counts` (never `f`) fails there and must be run.
    cells = [SETUP, "raise NotImplementedError()", "assert counts == [1, 2]"]
    assert run(cells, reference="counts = [1, 2]\ndef f():\n    return counts") == {1, 2}


def test_what_the_reference_cell_changes_in_place_or_imports_counts_too():
    # A stub that forgets `model.eval()`, or a variant importing another `softmax`: later readers must run.
    cells = ["class M:\n    training = True\n    def eval(self):\n        self.training = False\nmodel = M()", "pass",
             "assert not model.training"]
    assert run(cells, reference="model.eval()") == {1, 2}
    cells = [SETUP, "from math import sqrt as f", "assert f(4) == 5"]
    assert run(cells, reference="def f(x):\n    return x + 1") == {1, 2}


def test_an_unreadable_cell_before_the_variant_runs_everything():
    assert run(["def f(:", "x = 1", "y = x"]) is None
