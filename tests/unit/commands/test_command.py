"""The grading command's settings, without grading a notebook in a kernel (issue 19): how many submissions are
graded at once, and which setting is in force when the config file and the command line both set one; and one
grading run with paths typed relative to the folder it runs in."""
import copy
import os
from pathlib import Path

import pytest

import autograde.grade as grading
from autograde.course import assignment_ids
from autograde.run.execute import GuardedExecute
from tests.support.scenarios import kept

FIRST = assignment_ids()[0]


def test_jobs_default_to_the_cores_this_process_may_use(tmp_path, monkeypatch):
    for student in ("alice", "bob", "carol"):
        (tmp_path / "class" / student / FIRST).mkdir(parents=True)
        (tmp_path / "class" / student / FIRST / f"{FIRST}.ipynb").write_text("not JSON")
    # A machine of 64 cores, of which this process may use one (taskset, a container's cpuset).
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    seen = {}

    def executor(todo, done, lost, base, jobs, *rest):
        seen["jobs"] = jobs
        for key in todo:
            lost(key)

    monkeypatch.setattr(grading, "_grade_on_executor", executor)
    grading.grade(tmp_path / "class", tmp_path / "out", [FIRST], progress=False, sandbox=False)
    assert seen["jobs"] == 1, f"{seen['jobs']} submissions at once on the one core this process may use"


def help_text(capsys, *argv) -> str:
    from autograde.__main__ import main

    try:
        status = main(list(argv))
    except SystemExit as stop:  # (traitlets ends after printing its help)
        status = stop.code
    assert status in (0, None), status
    return capsys.readouterr().out


def test_help_all_lists_every_setting_of_every_configurable_class(capsys):
    import importlib

    from traitlets.config import Configurable

    for module in ("intake.collect", "run.execute", "gradebook", "run.kernel_manager", "run.sandbox"):  # (where the classes live)
        importlib.import_module(f"autograde.{module}")

    text = help_text(capsys, "grade", "--help-all")
    classes, seen = [Configurable], set()
    while classes:  # every configurable class the package defines
        for sub in classes.pop().__subclasses__():
            classes.append(sub)
            if sub.__module__.startswith("autograde."):
                seen.add(sub)
    assert {c.__name__ for c in seen} >= {"GuardedExecute", "SandboxKernelManager", "Collect", "GradebookExport"}
    missing = [f"--{c.__name__}.{name}" for c in seen for name in c.class_own_traits(config=True)
               if f"--{c.__name__}.{name}=" not in text]
    assert not missing, f"--help-all does not list {missing}"
    # Inherited settings too: the time limit is Execute's, set for the class that runs.
    assert "--GuardedExecute.timeout=" in text


def test_help_lists_every_option_and_what_it_sets(capsys):
    text = help_text(capsys, "grade", "--help")
    for option, setting in [("--timeout", "GuardedExecute.timeout"), ("--memory", "SandboxKernelManager.memory_mib"),
                            ("--processes", "SandboxKernelManager.max_processes"),
                            ("--disk", "SandboxKernelManager.disk_mib"),
                            ("--missing-grades", "GradebookExport.missing"),
                            ("--no-sandbox", "SandboxKernelManager.sandbox")]:
        assert option in text and setting in text, f"{option} ({setting}) is not in the help"
    for option in ("--out", "--assignment", "--jobs", "--scheduler", "--roster", "--lms", "--student-pattern",
                   "--gradebook", "--gradebook-column", "--quiet", "-v"):
        assert option in text, f"{option} is not in the help"


def test_a_mistyped_option_or_value_is_an_error_not_ignored(tmp_path, capsys):
    from autograde.__main__ import main

    (tmp_path / "class").mkdir()
    for argv in (["--timout", "30"], ["--jobs", "many"], ["--lms", "nosuch"], ["--jobs", "0"], ["--memory", "10"]):
        try:
            status = main(["grade", str(tmp_path / "class"), "--out", str(tmp_path / "out"), *argv])
        except SystemExit as stop:
            status = stop.code
        assert status == 2, (argv, status, capsys.readouterr())
        assert not (tmp_path / "out").exists(), argv


def test_the_settings_in_the_cache_key_read_the_same_after_grading_made_its_objects():
    # (A class setting given by its dotted name becomes the class once an instance is made: same key, same class.)
    from autograde.grade import settings_in_force
    from autograde.run.kernel_manager import SandboxKernelManager

    before = settings_in_force({"GuardedExecute": {"timeout": 7}})
    SandboxKernelManager()
    after = settings_in_force({"GuardedExecute": {"timeout": 7}})
    assert {k: (v, after.get(k)) for k, v in before.items() if after.get(k) != v} == {}
    assert before["timeout"] == before["GuardedExecute.timeout"] == 7


def test_a_setting_typed_for_any_class_is_in_the_cache_key():
    from autograde.grade import settings_in_force

    plain = settings_in_force({})
    typed = settings_in_force({"Collect": {"max_notebook_mib": 7}, "GuardedExecute": {"max_output_chars": 1234}})
    assert typed["Collect.max_notebook_mib"] == 7 and typed["GuardedExecute.max_output_chars"] == 1234
    assert plain["GuardedExecute.max_output_chars"] != 1234


@pytest.mark.parametrize("typed", [{"Execute": {"timeout": 3}}, {"NotebookClient": {"timeout": 3}},
                                   {"GuardedExecute": {"timeout": 3}}])
def test_a_setting_typed_for_a_class_wins_over_the_files_for_it_and_its_subclasses(monkeypatch, typed):
    # nbgrader_config.py sets GuardedExecute.timeout; --Execute.timeout=3 names its parent class, and traitlets
    # lets the subclass's section win: what the instructor typed must be what grading runs under.
    from traitlets.config import Config

    from autograde import course
    from autograde.grade import settings_in_force
    from autograde.run.execute import GuardedExecute

    file = Config({"GuardedExecute": {"timeout": 120}, "Execute": {"timeout": 90}})
    monkeypatch.setattr(course, "load_config", lambda: copy.deepcopy(file))
    config = course.nbgrader_config(Path("/tmp/course"), overrides=typed)
    assert course.configured(config, GuardedExecute, "timeout") == 3
    assert GuardedExecute(config=config).timeout == 3
    assert settings_in_force(typed)["timeout"] == 3
    assert settings_in_force(typed)["GuardedExecute.timeout"] == 3


def test_valid_settings_of_nbgrader_and_jupyter_are_not_refused(monkeypatch):
    # (Only numbers are range-checked: a None where a trait allows it, a callable trait, a class named by its path.)
    from traitlets.config import Config

    from autograde import course
    from autograde.grade import settings_in_force

    file = course.load_config()
    extra = {"NotebookClient": {"timeout_func": None}, "Execute": {"on_cell_complete": None},
             "KernelManager": {"client_factory": "jupyter_client.asynchronous.AsyncKernelClient"}}
    monkeypatch.setattr(course, "load_config", lambda: Config({**copy.deepcopy(file), **extra}))
    assert settings_in_force({})["timeout"] == 60


@pytest.mark.parametrize("section, name, value", [("SandboxKernelManager", "memory_mib", 100),
                                                   ("Execute", "timeout", 0), ("GuardedExecute", "agent_start_timeout", 0)])
def test_a_setting_out_of_range_in_the_file_is_refused_before_grading(tmp_path, monkeypatch, section, name, value):
    # The command line's values were range-checked, the file's were not: a bad one in the file now stops the run.
    from traitlets.config import Config

    from autograde import course
    from tests.support.commands import run_main

    file = course.load_config()
    monkeypatch.setattr(course, "load_config", lambda: Config({**file, section: {**file.get(section, {}), name: value}}))
    (tmp_path / "class").mkdir()
    status, _, err = run_main("grade", str(tmp_path / "class"), "--out", str(tmp_path / "out"))
    assert status == 2 and name in err and "nbgrader_config.py" in err, err


def test_an_edit_of_the_settings_file_during_a_run_changes_nothing_in_it(tmp_path, monkeypatch):
    # The run reads nbgrader_config.py once, at its start: what it grades under is what its cache key holds.
    from traitlets.config import Config

    from autograde import course
    from autograde.batch import worker

    settings = tmp_path / "nbgrader_config.py"
    settings.write_text(course.NBGRADER_CONFIG.read_text() + "\nc.GuardedExecute.timeout = 41\n")
    monkeypatch.setattr(course, "NBGRADER_CONFIG", settings)
    (tmp_path / "class" / "ann" / FIRST).mkdir(parents=True)
    (tmp_path / "class" / "ann" / FIRST / f"{FIRST}.ipynb").write_text("not JSON")
    seen = {}

    def executor(todo, done, lost, base, jobs, *rest):
        settings.write_text(settings.read_text() + "\nc.GuardedExecute.timeout = 7\n")  # (edited mid-run)
        seen["timeout"] = grading.settings_in_force()["timeout"]
        for key in todo:
            lost(key)

    monkeypatch.setattr(grading, "_grade_on_executor", executor)
    grading.grade(tmp_path / "class", tmp_path / "out", [FIRST], progress=False, sandbox=False)
    assert seen["timeout"] == 41, "the run read the settings file again after its start"
    assert grading.settings_in_force()["timeout"] == 7, "after the run, the file is read as it is now"
    # A worker process of the run is given what the run read, and reads that from then on.
    monkeypatch.setattr(course, "_RUN_SETTINGS", [])
    worker.start(tmp_path / "base", 1, None, settings=Config({"GuardedExecute": {"timeout": 41}}))
    assert course.configured(course.nbgrader_config(tmp_path), GuardedExecute, "timeout") == 41


def _grade_with_relative_paths(base) -> dict:
    """The reference of chapter 1 graded as the README types it: from the folder holding the export, with the
    submissions and ``--out grades`` given relative to it; grades.csv's row and what the command printed."""
    import subprocess
    import sys

    from autograde.course import REPO
    from tests.support.commands import read_rows
    from tests.support.synthetic import completed_notebook, write_submission

    write_submission(completed_notebook(FIRST), base / "class", "reference", FIRST)
    proc = subprocess.run([sys.executable, "-m", "autograde", "grade", "class", "--out", "grades", "--jobs", "1",
                           "--quiet"], cwd=base, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    return {"grades": read_rows(base / "grades" / "grades.csv"), "stdout": proc.stdout}


@pytest.mark.slow
@pytest.mark.sandbox
def test_relative_paths_grade_as_the_readme_types_them():
    run = kept("relative-paths", __file__, _grade_with_relative_paths)
    [row] = run["grades"]
    assert float(row["score"]) == float(row["max_score"]) > 0, \
        f"the reference lost points when --out was a relative path: {row}; the command said: {run['stdout']}"
