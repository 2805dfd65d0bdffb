"""Unit tests of the result cache (no kernel): its key changes with everything a grade depends on, and nothing else."""
import json
import shutil

import pytest

from autograde.course import EXERCISES, SOLUTIONS, assignment_ids
from autograde.results.cache import PACKAGE, grader_fingerprint, key_parts, load_result, result_key, save_result
from autograde.results.classify import CellResult, Graded, Status

FIRST, SECOND = assignment_ids()[:2]
SETTINGS = {"timeout": 60, "sandbox": True, "memory_mib": 4096, "file_size_mib": 512, "max_processes": 128,
            "disk_mib": 512}


@pytest.fixture
def notebook(tmp_path):
    path = tmp_path / "a" / f"{FIRST}.ipynb"
    path.parent.mkdir()
    path.write_bytes(b'{"cells": [], "answer": "mine"}')
    return path


def test_the_key_is_stable_and_depends_on_the_bytes_not_the_path(notebook, tmp_path):
    key = result_key(notebook, FIRST, SETTINGS)
    assert result_key(notebook, FIRST, dict(SETTINGS)) == key
    assert result_key(notebook, FIRST, dict(reversed(list(SETTINGS.items())))) == key  # order of settings is no change
    elsewhere = tmp_path / "b.ipynb"
    shutil.copyfile(notebook, elsewhere)
    assert result_key(elsewhere, FIRST, SETTINGS) == key


def test_the_key_changes_with_one_byte_of_the_notebook(notebook):
    key = result_key(notebook, FIRST, SETTINGS)
    notebook.write_bytes(notebook.read_bytes().replace(b"mine", b"mind"))
    assert result_key(notebook, FIRST, SETTINGS) != key


def test_the_key_changes_with_the_assignment_and_its_source(notebook, tmp_path):
    key = result_key(notebook, FIRST, SETTINGS)
    assert result_key(notebook, SECOND, SETTINGS) != key
    solutions = tmp_path / "solutions"
    shutil.copytree(SOLUTIONS / FIRST, solutions / FIRST)
    assert result_key(notebook, FIRST, SETTINGS, solutions=solutions) == key
    source = solutions / FIRST / f"{FIRST}.py"
    source.write_text(source.read_text() + "\n# a hidden test tightened\n")
    assert result_key(notebook, FIRST, SETTINGS, solutions=solutions) != key


def test_the_key_changes_with_the_released_notebook(notebook, tmp_path):
    # Grading rebuilds a submission against exercises/<a>/<a>.ipynb: a regenerated student notebook is a change.
    exercises = tmp_path / "exercises"
    shutil.copytree(EXERCISES / FIRST, exercises / FIRST)
    key = result_key(notebook, FIRST, SETTINGS, exercises=exercises)
    assert key == result_key(notebook, FIRST, SETTINGS)
    released = exercises / FIRST / f"{FIRST}.ipynb"
    released.write_bytes(released.read_bytes().replace(b"YOUR CODE HERE", b"YOUR CODE HERE!", 1))
    assert result_key(notebook, FIRST, SETTINGS, exercises=exercises) != key


@pytest.mark.parametrize("name, value", [("timeout", 30), ("sandbox", False), ("memory_mib", 2048),
                                         ("file_size_mib", 64), ("max_processes", 0), ("disk_mib", 1024)])
def test_the_key_changes_with_each_limit(notebook, name, value):
    assert result_key(notebook, FIRST, {**SETTINGS, name: value}) != result_key(notebook, FIRST, SETTINGS)


def package_copy(dest):
    return shutil.copytree(PACKAGE, dest, ignore=shutil.ignore_patterns("__pycache__"))


def test_the_key_changes_with_the_graders_code_templates_and_settings(notebook, tmp_path):
    # Each copy is changed before its first use: the fingerprint is computed once per folder and process.
    same = package_copy(tmp_path / "same")
    (same / "__pycache__").mkdir()
    (same / "__pycache__" / "grade.cpython-311.pyc").write_bytes(b"compiled: no change to the grader")
    (same / "notes.txt").write_text("not code")
    key = result_key(notebook, FIRST, SETTINGS, package=same)
    assert key == result_key(notebook, FIRST, SETTINGS, package=package_copy(tmp_path / "again"))
    for n, (name, change) in enumerate([("intake/normalise.py", "\n# a change to the grader's code\n"),
                                        ("pages/templates/feedback.html.j2", "\n{# a change to a page #}\n"),
                                        ("nbgrader_config.py", "\nc.Execute.timeout = 45\n")]):
        changed = package_copy(tmp_path / f"changed-{n}")
        (changed / name).write_text((changed / name).read_text() + change)
        assert result_key(notebook, FIRST, SETTINGS, package=changed) != key, name
    added = package_copy(tmp_path / "added")
    (added / "new_step.py").write_text("")
    assert result_key(notebook, FIRST, SETTINGS, package=added) != key
    assert grader_fingerprint(added) != grader_fingerprint(same)


def test_a_result_is_reused_only_under_the_same_key(notebook, tmp_path):
    out = tmp_path / "out"
    parts = key_parts(notebook, FIRST, SETTINGS)
    graded = Graded([CellResult("ann", FIRST, "test_softmax", 0.0, 1.0, Status.TIMEOUT, "too slow")], ["a note"])
    assert load_result(out, "ann", FIRST, parts) is None
    save_result(out, "ann", FIRST, parts, graded)
    again = load_result(out, "ann", FIRST, parts)
    assert again == graded and again.rows[0].status is Status.TIMEOUT
    assert load_result(out, "bob", FIRST, parts) is None
    assert load_result(out, "ann", FIRST, key_parts(notebook, FIRST, {**SETTINGS, "timeout": 30})) is None


def test_a_damaged_saved_result_is_graded_again(notebook, tmp_path):
    out = tmp_path / "out"
    parts = key_parts(notebook, FIRST, SETTINGS)
    save_result(out, "ann", FIRST, parts, Graded([]))
    path = out / "results" / "ann" / f"{FIRST}.json"
    for damaged in ("{not json", "[]", '{"parts": "x"}', '{"parts": PARTS, "rows": [{"student_id": "ann"}]}',
                    '{"parts": PARTS, "rows": [{"student_id": "ann", "assignment": "a", "grade_id": "t", "score": 0, '
                    '"max_score": 1, "status": "no such status", "message": ""}]}'):
        path.write_text(damaged.replace("PARTS", json.dumps(parts)))
        assert load_result(out, "ann", FIRST, parts) is None, damaged


@pytest.mark.parametrize("change", ["upgraded", "installed"])
def test_the_key_changes_with_any_installed_package(notebook, tmp_path, monkeypatch, change):
    # hypothesis is what the hidden tests draw their cases with: a grade depends on its version as much as on numpy's.
    # The fingerprint is kept per folder and process: each case uses a fresh copy of the grader.
    import importlib.metadata

    key = result_key(notebook, FIRST, SETTINGS, package=package_copy(tmp_path / "before"))
    real = list(importlib.metadata.distributions())

    class Changed:
        def __init__(self, name, version):
            self.metadata, self.version = {"Name": name}, version

    if change == "upgraded":
        fake = [Changed(d.metadata["Name"], d.version + ".post1") if d.metadata["Name"] == "hypothesis" else d
                for d in real]
        assert fake != real, "hypothesis is not installed: the case proves nothing"
    else:
        fake = [*real, Changed("some-package-a-kernel-could-import", "1.0")]
    monkeypatch.setattr(importlib.metadata, "distributions", lambda: iter(fake))
    assert result_key(notebook, FIRST, SETTINGS, package=package_copy(tmp_path / "after")) != key
