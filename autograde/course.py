"""Where things are, and an nbgrader course directory built from the sources."""
from __future__ import annotations

import ast
import contextlib
import copy
import functools
import shutil
from pathlib import Path

import jupytext
import nbformat
import nbgrader.api
from nbgrader.apps import NbGraderAPI
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config, Configurable, PyFileConfigLoader

from .cells import CellKind, cell_kind
from .reference import solution_code
from .sources import defined_names, free_names

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = REPO / "solutions"
EXERCISES = REPO / "exercises"
NBGRADER_CONFIG = Path(__file__).resolve().parent / "nbgrader_config.py"
# nbgrader's runtime data for its own commands (source/, submitted/, autograded/, feedback/, gradebook.db);
# git-ignored, and outside the package. nbgrader_config.py points nbgrader there.
COURSE = REPO / "course"


def _alembic_head() -> str:
    """The gradebook schema's version, from alembic's Python API (what nbgrader asks the `alembic` command for)."""
    from alembic.config import Config as AlembicConfig
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import _temp_alembic_ini

    with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:
        return ScriptDirectory.from_config(AlembicConfig(ini)).get_current_head()


@functools.cache
def prepare_nbgrader() -> None:
    """Make nbgrader's gradebook creation independent of PATH, and fast; once per process.

    nbgrader runs the `alembic` command each time it creates a gradebook: that
    fails when the venv is not activated (``.venv/bin/python -m autograde``)
    and costs a process start per worker course. The same answer comes from
    alembic's Python API, asked once. Called before a course is used (never at
    import), and by nbgrader_config.py for nbgrader's own commands.
    """
    nbgrader.api.get_alembic_version = functools.cache(_alembic_head)


def assignment_ids() -> list[str]:
    """The assignment ids that have a source ``solutions/<a>/<a>.py``, sorted."""
    return sorted(p.parent.name for p in SOLUTIONS.glob("*/*.py") if p.stem == p.parent.name)


def source_notebook(assignment: str) -> nbformat.NotebookNode:
    """The instructor notebook of `assignment`, read from its jupytext source.

    Cell ids are made deterministic (the nbgrader grade id, else the cell's
    position) so that compiling twice gives byte-identical notebooks.
    """
    path = SOLUTIONS / assignment / f"{assignment}.py"
    if not path.is_file():
        raise FileNotFoundError(f"no source for assignment {assignment!r}: {path} does not exist")
    stat = path.stat()
    # A copy of the parse, which is read again only when the file changes: callers may change what they get.
    return copy.deepcopy(_parsed_source(path, stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=32)
def _parsed_source(path: Path, mtime_ns: int, size: int) -> nbformat.NotebookNode:
    """The jupytext parse of `path` as it was at (`mtime_ns`, `size`), with deterministic cell ids."""
    nb = jupytext.read(path)
    for index, cell in enumerate(nb.cells):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        cell.id = grade_id or f"cell-{index}"
    return nb


# The chapters whose test cells run in the checker, outside the student's kernel (autograde/run/checker.py): all of
# them. A chapter left out would run its tests inside the kernel, as plain nbgrader does, where student code can
# read and change them: a new chapter joins this set once its tests pass through the checker.
CHECKED_OUTSIDE = frozenset({"01-weighted-sum", "02-additive-attention", "03-self-attention", "04-long-sequences",
                             "05-transformer", "06-beyond-text", "07-backward-pass", "08-cheaper-attention"})


@functools.cache
def answer_names(assignment: str) -> dict[str, frozenset]:
    """Names each answer's reference solution defines, less those that given cells define, by grade id."""
    cells = source_notebook(assignment).cells
    given = {n for c in cells if cell_kind(c) == CellKind.GIVEN for n in defined_names(c.source)}
    return {c.metadata["nbgrader"]["grade_id"]: frozenset(set(defined_names(solution_code(c.source))) - given)
            for c in cells if cell_kind(c) == CellKind.ANSWER}


@functools.cache
def checker_plan(assignment: str) -> tuple[dict[str, tuple[str, str]], frozenset]:
    """How a notebook of `assignment` runs with the checker: ({grade id: (kind, source)} for the given and test
    cells, from the instructor's source; "kernel" is a given cell that uses the student's answers, which runs only
    in the kernel), and the names the tests look up in the kernel (the answers', and what those given cells
    define)."""
    cells = source_notebook(assignment).cells
    names = set().union(*answer_names(assignment).values())
    plan = {}
    for cell in cells:
        kind, grade_id = cell_kind(cell), cell.metadata.get("nbgrader", {}).get("grade_id")
        if kind in ("given", "test") and grade_id:
            if kind == "given" and free_names(cell.source) & names:
                kind = "kernel"
                names |= set(defined_names(cell.source))
            elif kind == "given":
                names |= training_functions(cell.source)
            plan[grade_id] = (kind, cell.source)
    return plan, frozenset(names)


def training_functions(source: str) -> set[str]:
    """The functions `source` defines at top level that train (call ``.backward()``): they must run where the
    student's model and its autograd graph are, so the tests call the kernel's (they are given, like the rest of
    their cell, which also runs in the checker for the helpers that only read a model's outputs)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and any(
        isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "backward"
        for call in ast.walk(node))}


def solution_cell_ids(assignment: str) -> list[str]:
    """Grade ids of the cells a student fills in, in notebook order."""
    return [c.metadata["nbgrader"]["grade_id"] for c in source_notebook(assignment).cells
            if c.metadata.get("nbgrader", {}).get("solution")]


def graded_cell_ids(assignment: str) -> list[str]:
    """Grade ids of the autograded test cells, in notebook order."""
    return [c.metadata["nbgrader"]["grade_id"] for c in source_notebook(assignment).cells
            if cell_kind(c) == CellKind.TEST]


def cells_checking(grade_id: str, test_cells: list[str]) -> list[str]:
    """The test cells that check solution cell `grade_id`: ``test_<id>`` and ``test_<id>_<aspect>``."""
    return [c for c in test_cells if c == f"test_{grade_id}" or c.startswith(f"test_{grade_id}_")]


# The settings file as a grading run read it at its start (:func:`read_once`), so that this process and its workers
# grade under the settings of the cache key even if the file is edited during the run.
_RUN_SETTINGS: list[Config] = []


def load_config() -> Config:
    """The settings in ``autograde/nbgrader_config.py``, the one place grading's defaults are chosen: as a running
    grading run read them at its start (a copy), else as the file says now."""
    if _RUN_SETTINGS:
        return copy.deepcopy(_RUN_SETTINGS[-1])
    return PyFileConfigLoader(NBGRADER_CONFIG.name, path=str(NBGRADER_CONFIG.parent)).load_config()


def hold_settings(settings: Config) -> None:
    """Make :func:`load_config` give `settings` in this process from now on (a worker, given what its run read)."""
    _RUN_SETTINGS[:] = [copy.deepcopy(settings)]


@contextlib.contextmanager
def read_once(settings: Config | None = None):
    """Within the block, :func:`load_config` gives `settings` (default: the file as read now) in this process: a
    grading run holds it from its start, and its workers hold what it read."""
    _RUN_SETTINGS.append(copy.deepcopy(settings) if settings is not None else load_config())
    try:
        yield _RUN_SETTINGS[-1]
    finally:
        _RUN_SETTINGS.pop()


def _subclass_sections(section: str, config: Config) -> list[str]:
    """The sections of `config` that name a subclass of the configurable class named `section` (among the classes
    loaded: the grading classes are, wherever settings are resolved)."""
    classes: dict[str, set[type]] = {}
    todo = [Configurable]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub not in classes.setdefault(sub.__name__, set()):
                classes[sub.__name__].add(sub)
                todo.append(sub)
    parents = classes.get(section, set())
    return [name for name in config if name != section and isinstance(config[name], Config)
            and any(issubclass(sub, parent) for sub in classes.get(name, ()) for parent in parents)]


def configured(config: Config, cls: type, name: str):
    """The value trait `name` of `cls` takes under `config`, as an instance would get it (subclass sections win)."""
    value = cls.class_traits()[name].default_value
    for klass in reversed(cls.mro()):
        if klass.__name__ in config and name in config[klass.__name__]:
            value = config[klass.__name__][name]
    return value


def nbgrader_config(root: Path, timeout: int | None = None, kernel: dict | None = None,
                    overrides: dict | None = None) -> Config:
    """This course's nbgrader configuration, with the course directory moved to `root`.

    Everything lives under `root` (source/, release/, submitted/, autograded/,
    feedback/, gradebook.db), so nothing in the repository is touched.
    `overrides` (settings by class name, ``{"GuardedExecute": {"timeout": 30}}``:
    what the command line set) go over the file's, for the class named.
    `timeout`, if given, replaces the per-cell time limit in seconds (set for
    :class:`autograde.run.execute.GuardedExecute`, the class that runs the cells, so
    that it wins over a value the file sets for it or for nbgrader's Execute);
    `kernel` sets options of :class:`autograde.run.kernel_manager.SandboxKernelManager`
    (``sandbox``, ``memory_mib``, ``threads``, ...).
    """
    config = load_config()
    typed = overrides or {}
    for section, values in typed.items():
        for name, value in values.items():
            config[section][name] = value
            # (traitlets lets a subclass's section win: the file's value for a subclass would beat what was typed)
            for sub in _subclass_sections(section, config):
                if name in config[sub] and name not in typed.get(sub, {}):
                    config[sub][name] = value
    if timeout is not None:
        config.GuardedExecute.timeout = timeout
    for name, value in (kernel or {}).items():
        config.SandboxKernelManager[name] = value
    course = config.CourseDirectory
    course.root = str(root)
    for name in ("source", "release", "submitted", "autograded", "feedback"):
        course[f"{name}_directory"] = name
    course.db_url = f"sqlite:///{root / 'gradebook.db'}"
    return config


def nbgrader_api(root: Path, timeout: int | None = None, kernel: dict | None = None,
                 overrides: dict | None = None) -> NbGraderAPI:
    """An nbgrader API object for the course directory `root` (options as :func:`nbgrader_config`)."""
    prepare_nbgrader()
    config = nbgrader_config(root, timeout, kernel, overrides)
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def make_course(root: Path, assignments: list[str], timeout: int | None = None,
                kernel: dict | None = None, overrides: dict | None = None) -> NbGraderAPI:
    """Create an nbgrader course at `root` holding `assignments`, generated and in its gradebook.

    Writes ``root/source/<a>/<a>.ipynb`` from the jupytext sources and runs
    ``nbgrader generate_assignment`` on each, which records the grade cells,
    their points and checksums in ``root/gradebook.db`` and writes the student
    version to ``root/release/<a>/<a>.ipynb``.
    """
    root.mkdir(parents=True, exist_ok=True)
    api = nbgrader_api(root, timeout, kernel, overrides)
    for assignment in assignments:
        folder = root / "source" / assignment
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        nbformat.write(source_notebook(assignment), folder / f"{assignment}.ipynb")
        result = api.generate_assignment(assignment, force=True, create=True)
        if not result["success"]:
            raise RuntimeError(f"nbgrader generate_assignment {assignment} failed:\n{result.get('error') or result.get('log')}")
    return api
