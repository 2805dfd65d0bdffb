"""The grader's shape: one module per pipeline step, imports in one direction, nothing done at import."""
import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import autograde

PACKAGE = Path(autograde.__file__).parent

# The modules in pipeline order: each may import only modules before it. Helpers that several steps share come
# before the first step that uses them.
ORDER = [
    "sandbox", "kernel_guard", "sources", "reference", "course", "outline", "tracebacks",  # scripts, shared helpers
    "lms", "collect",  # 1. collect
    "normalise",  # 2. normalise
    "kernel_manager", "execute",  # 3. execute
    "classify",  # 4. classify
    "cache",  # 5. cache
    "worker", "run",  # 6. grade one, run many
    "outputs", "pages", "feedback", "report",  # 7. write outputs
    "gradebook",  # 8. fill an LMS gradebook
    "grade", "compile", "__main__", "__init__",  # the commands
]
CONFIG = "nbgrader_config"  # a traitlets config file that nbgrader executes, not a module of the pipeline


def package_imports(module: Path) -> set[str]:
    """The package's modules that `module` imports (relative or as ``autograde.x``), anywhere in its code."""
    found = set()
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:
                found.add(node.module.split(".")[0])
            elif node.level == 1:
                found.update(alias.name for alias in node.names)
            elif node.module and node.module.split(".")[0] == "autograde" and "." in node.module:
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("autograde."))
    return found


def test_every_module_has_its_place_in_the_pipeline():
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {CONFIG}
    assert modules <= set(ORDER), f"place {sorted(modules - set(ORDER))} in ORDER"


def test_imports_go_one_way_only():
    backwards = []
    for path in sorted(PACKAGE.glob("*.py")):
        if path.stem == CONFIG:
            continue
        for imported in package_imports(path):
            if ORDER.index(imported) >= ORDER.index(path.stem):
                backwards.append(f"{path.stem} imports {imported}")
    assert backwards == []


def test_the_import_check_sees_imports():
    # (So that the check above cannot pass by reading nothing.)
    assert package_imports(PACKAGE / "grade.py") >= {"collect", "cache", "run", "worker", "report", "execute"}
    assert package_imports(PACKAGE / "normalise.py") == {"sources"}


# The import statements checked below, each for what it imports and changes on its own.
COLLECT = "import autograde.collect, autograde.normalise"
COMMANDS = "import autograde.grade, autograde.course, autograde.report, autograde.__main__"
WORKER = "import autograde.worker"

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
    assert "autograde.normalise" in seen["modules"]
    assert not {"autograde.execute", "autograde.kernel_manager", "autograde.classify"} & set(seen["modules"])


def test_importing_the_package_changes_nothing(imported):
    seen = imported[COMMANDS]
    assert "autograde.report" in seen["modules"]
    assert not seen["path_changed"] and not seen["nbgrader_patched"]
    assert not any(m.startswith("matplotlib") for m in seen["modules"]), "matplotlib is imported only to draw"


def test_a_worker_never_imports_matplotlib_or_the_writers(imported):
    seen = imported[WORKER]
    assert "autograde.worker" in seen["modules"]
    assert not {"autograde.report", "autograde.feedback", "autograde.outputs"} & set(seen["modules"])
    assert not any(m.startswith("matplotlib") for m in seen["modules"])
