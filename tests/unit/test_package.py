"""The grader's shape: the pipeline's steps as layers, imports in one direction, nothing done at import."""
import ast
import graphlib
import inspect
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import autograde

PACKAGE = Path(autograde.__file__).parent

# The layers in pipeline order: a module may import from its own layer or an earlier one, never a later one, and the
# modules of a layer do not import each other in a circle. An entry names a subpackage (all of its modules) or a
# top-level module; every module of the package must be in exactly one layer.
LAYERS = [
    ["cells", "course", "reference", "sources", "startup", "text"],  # the course's facts and code, shared by every step
    ["intake"],  # collect, normalise
    ["run"],  # execute, sandboxed, tests in the checker
    ["results"],  # classify, cache, the CSVs
    ["batch"],  # one submission in a worker, many on a pool
    ["pages"],  # feedback and report
    ["gradebook"],  # fill an LMS gradebook
    ["grade", "output_folder", "compile", "gradescope", "__main__", "__init__"],  # the commands (and --out's swap)
]
CONFIG = "nbgrader_config"  # a traitlets config file that nbgrader executes, not a module of the pipeline


def modules(package: Path) -> dict[str, Path]:
    """Every module of `package` by its dotted name inside it (a subpackage's ``__init__.py`` by the subpackage's name,
    the package's own as ``__init__``), its config file left out."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts.pop()
        found[".".join(parts)] = path
    found.pop(CONFIG, None)
    return found


def defined_names(path: Path) -> set[str]:
    """The names the module at `path` defines at its top level (assigned, defined or imported)."""
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return found


def package_imports(path: Path, package: Path) -> set[str]:
    """The modules of `package` that the module at `path` imports (relative, or absolute by the package's name),
    anywhere in its code, by their dotted names inside `package`."""
    known = modules(package)
    here = list(path.relative_to(package).parent.parts)  # the package the module is in (for __init__.py: itself)

    def resolve(base: list[str], name: str | None, names: list[str]) -> set[str]:
        target = ".".join(base + (name.split(".") if name else [])) or "__init__"
        found = set()
        for alias in names:  # `from x import y`: y is a module of x, or a name defined in x
            sub = alias if target == "__init__" else f"{target}.{alias}"
            if sub in known or (target in known and known[target].name == "__init__.py"
                                and alias not in defined_names(known[target])):
                found.add(sub)  # a module; or, if no such module, no name of the package's __init__.py either
            else:
                found.add(target)
        return found

    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names]
            if node.level:
                found |= resolve(here[:len(here) - (node.level - 1)], node.module, names)
            elif node.module and node.module.split(".")[0] == package.name:
                found |= resolve([], node.module.partition(".")[2] or None, names)
        elif isinstance(node, ast.Import):
            found |= {a.name.partition(".")[2] for a in node.names if a.name.startswith(package.name + ".")}
    return found


def layer_of(module: str, layers: list[list[str]]) -> list[int]:
    """The indices of the layers `module` is in (one, if the layers are right)."""
    return [i for i, entries in enumerate(layers) for entry in entries
            if module == entry or module.startswith(entry + ".")]


def layering_faults(package: Path, layers: list[list[str]]) -> list[str]:
    """Everything wrong with `package`'s layers: a module in no layer or in two, an entry naming nothing, an import of
    a later layer or of no module of the package, a circle of imports."""
    known = modules(package)
    faults = [f"{m} is in no layer: place it in LAYERS" for m in known if not layer_of(m, layers)]
    faults += [f"{m} is in layers {layer_of(m, layers)}" for m in known if len(layer_of(m, layers)) > 1]
    faults += [f"LAYERS names {e}, which is no module" for entries in layers for e in entries
               if not any(layer_of(m, [[e]]) for m in known)]
    graph = {}
    for module, path in known.items():
        graph[module] = imported = package_imports(path, package)
        for target in sorted(imported):
            if target not in known:
                faults.append(f"{module} imports {target}, which is no module of the package")
            elif layer_of(module, layers) and layer_of(target, layers) and \
                    layer_of(target, layers)[0] > layer_of(module, layers)[0]:
                faults.append(f"{module} imports {target}, of a later layer")
    try:
        graphlib.TopologicalSorter({m: {t for t in ts if t in known} for m, ts in graph.items()}).prepare()
    except graphlib.CycleError as cycle:
        faults.append(f"imports in a circle: {' -> '.join(cycle.args[1])}")
    return faults


def test_every_module_is_in_one_layer_and_imports_go_one_way_only():
    faults = layering_faults(PACKAGE, LAYERS)
    assert not faults, "\n".join(faults)


def test_the_import_check_sees_imports():
    # (So that the check above cannot pass by reading nothing.)
    assert package_imports(PACKAGE / "grade.py", PACKAGE) >= {
        "intake.collect", "results.cache", "batch.pool", "batch.worker", "pages.report", "run.execute"}
    assert package_imports(PACKAGE / "intake" / "normalise.py", PACKAGE) == {"cells", "sources", "text"}
    assert package_imports(PACKAGE / "pages" / "feedback.py", PACKAGE) == {
        "course", "results.classify", "results.late", "pages.outline", "pages.render"}
    assert package_imports(PACKAGE / "run" / "kernel_manager.py", PACKAGE) == {"run.cgroups", "run.clock", "run.sandbox"}


def test_the_layer_check_finds_each_fault(tmp_path):
    # A package of two layers, a then b, with each fault the check must find.
    files = {
        "__init__.py": "",
        "a/__init__.py": "",
        "a/early.py": "from ..b.late import x\n",  # backwards, relative
        "a/other.py": "def f():\n    import pkg.b.late\n",  # backwards, absolute, inside a function
        "a/one.py": "from . import two\n",  # a circle inside layer a
        "a/two.py": "from .one import y\n",
        "b/__init__.py": "",
        "b/late.py": "from ..a.one import z\nfrom ..c import w\nfrom .. import gone\n",  # allowed; then no such modules
        "stray.py": "",  # in no layer
    }
    for name, text in files.items():
        (tmp_path / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "pkg" / name).write_text(text)
    faults = layering_faults(tmp_path / "pkg", [["a", "__init__"], ["b", "gone"]])
    assert sorted(faults) == sorted([
        "stray is in no layer: place it in LAYERS",
        "LAYERS names gone, which is no module",
        "a.early imports b.late, of a later layer",
        "a.other imports b.late, of a later layer",
        "b.late imports c, which is no module of the package",
        "b.late imports gone, which is no module of the package",
        next(f for f in faults if f.startswith("imports in a circle: ")),
    ]), faults
    circle = next(f for f in faults if f.startswith("imports in a circle: "))
    assert set(circle.removeprefix("imports in a circle: ").split(" -> ")) == {"a.one", "a.two"}, circle


def test_every_subpackage_is_installed():
    # pyproject.toml lists the packages by name: a subpackage missing there is absent from a non-editable install.
    listed = set(tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {".".join(p.relative_to(PACKAGE.parent).parts) for p in [PACKAGE, *PACKAGE.rglob("*")]
               if p.is_dir() and ((p / "__init__.py").exists() or p.name == "templates")}
    assert listed == folders, f"pyproject.toml's packages miss {sorted(folders - listed)}, name {sorted(listed - folders)}"


# The import statements checked below, each for what it imports and changes on its own.
COLLECT = "import autograde.intake.collect, autograde.intake.normalise"
COMMANDS = "import autograde.grade, autograde.course, autograde.pages.report, autograde.__main__"
WORKER = "import autograde.batch.worker"

# One interpreter imports what every probe needs, then forks a child per statement (all at once, each reporting on
# its own pipe): each child starts from the state of a fresh interpreter after that common part (sys.modules
# accumulates, so the statements must not share one), and the interpreter's start and nbgrader's import are paid
# once instead of three times.
PROBE = """
import json, os, sys
path = os.environ.get('PATH')
import nbgrader.api
alembic = nbgrader.api.get_alembic_version
children = {}
for statement in json.loads(sys.argv[1]):
    sys.stdout.flush()
    sys.stderr.flush()
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read)
        try:
            exec(statement, {})
            seen = {'modules': sorted(m for m in sys.modules if m.split('.')[0] in ('autograde', 'matplotlib')),
                    'path_changed': os.environ.get('PATH') != path,
                    'nbgrader_patched': nbgrader.api.get_alembic_version is not alembic}
            with os.fdopen(write, 'w') as report:
                json.dump(seen, report)
            os._exit(0)
        except BaseException:
            import traceback
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
    os.close(write)
    children[statement] = (child, read)
results, failed = {}, False
for statement, (child, read) in children.items():
    with os.fdopen(read) as report:
        text = report.read()
    failed |= os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) != 0
    if text:
        results[statement] = json.loads(text)
print(json.dumps(results))
sys.exit(failed)
"""


@pytest.fixture(scope="module")
def imported() -> dict[str, dict]:
    """For each statement above, what running it in a fresh interpreter imported (of the package and matplotlib)
    or changed (PATH, nbgrader), as seen from there."""
    statements = [COLLECT, COMMANDS, WORKER]
    # (From the checkout's root, so that `-c` imports this checkout's package, not another one installed.)
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(statements)], cwd=PACKAGE.parent,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"an import statement failed in the probe:\n{proc.stderr}"
    seen = json.loads(proc.stdout.splitlines()[-1])
    assert sorted(seen) == sorted(statements), f"the probe reported {sorted(seen)}, not every statement"
    return seen


def test_collect_and_normalise_never_import_execute(imported):
    seen = imported[COLLECT]
    assert "autograde.intake.normalise" in seen["modules"]
    assert not {m for m in seen["modules"] if m.startswith(("autograde.run", "autograde.results"))}, seen["modules"]


def test_importing_the_package_changes_nothing(imported):
    seen = imported[COMMANDS]
    assert "autograde.pages.report" in seen["modules"]
    assert not seen["path_changed"] and not seen["nbgrader_patched"]
    assert not any(m.startswith("matplotlib") for m in seen["modules"]), "the grader draws its figures without matplotlib"


def test_a_worker_never_imports_matplotlib_or_the_writers(imported):
    seen = imported[WORKER]
    assert "autograde.batch.worker" in seen["modules"]
    writers = {m for m in seen["modules"] if m.startswith("autograde.pages") or m == "autograde.results.outputs"}
    assert not writers, f"a worker imports {sorted(writers)}"
    assert not any(m.startswith("matplotlib") for m in seen["modules"])


@pytest.mark.slow
def test_a_spawned_worker_leaves_out_the_unused_import_before_nbformat_comes_in():
    # What a spawned pool worker does: import its initializer's module (which must not bring nbformat in yet), call it,
    # then import the worker, which imports nbformat. (slow: a fresh interpreter that imports nbformat.)
    probe = ("import sys\nimport autograde.batch.boot as boot\nearly = 'nbformat' in sys.modules\n"
             "boot.skip_unused_imports()\nimport autograde.batch.worker, jsonschema\n"
             "print(early, sys.modules.get('rfc3987_syntax') is not None)")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=PACKAGE.parent, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    early, loaded = proc.stdout.split()
    assert early == "False", "importing the pool's initializer already imports nbformat: too late to leave anything out"
    assert loaded == "False", "rfc3987_syntax was imported anyway"
    from autograde import grade

    assert "initializer=boot.start_pool_worker" in inspect.getsource(grade._grade_on_executor)
