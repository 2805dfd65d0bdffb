"""The grader's shape: one module per pipeline step, imports in one direction, nothing done at import."""
import ast
import subprocess
import sys
from pathlib import Path

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


def imported_after(statement: str) -> dict:
    """What running `statement` in a fresh interpreter imported (of the package and matplotlib) or changed (PATH,
    nbgrader), as seen from there."""
    probe = ("import os, sys\npath = os.environ.get('PATH')\nimport nbgrader.api\nalembic = nbgrader.api.get_alembic_version\n"
             f"{statement}\n"
             "print(repr({'modules': sorted(m for m in sys.modules if m.split('.')[0] in ('autograde', 'matplotlib')), "
             "'path_changed': os.environ.get('PATH') != path, "
             "'nbgrader_patched': nbgrader.api.get_alembic_version is not alembic}))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return ast.literal_eval(proc.stdout.strip().splitlines()[-1])


def test_collect_and_normalise_never_import_execute():
    seen = imported_after("import autograde.collect, autograde.normalise")
    assert "autograde.normalise" in seen["modules"]
    assert not {"autograde.execute", "autograde.kernel_manager", "autograde.classify"} & set(seen["modules"])


def test_importing_the_package_changes_nothing():
    seen = imported_after("import autograde.grade, autograde.course, autograde.report, autograde.__main__")
    assert "autograde.report" in seen["modules"]
    assert not seen["path_changed"] and not seen["nbgrader_patched"]
    assert not any(m.startswith("matplotlib") for m in seen["modules"]), "matplotlib is imported only to draw"


def test_a_worker_never_imports_matplotlib_or_the_writers():
    seen = imported_after("import autograde.worker")
    assert "autograde.worker" in seen["modules"]
    assert not {"autograde.report", "autograde.feedback", "autograde.outputs"} & set(seen["modules"])
    assert not any(m.startswith("matplotlib") for m in seen["modules"])
