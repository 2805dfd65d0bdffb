"""The README's "Using nbgrader's own commands": nbgrader run from autograde/ grades as `python -m autograde grade` does.

Run in a copy of the course (`compiled_course`: `python -m autograde compile`
wrote its course/source/ and exercises/), so the repository is not touched.
"""
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograde.course import EXERCISES, REPO, assignment_ids, graded_cell_ids
from tests.support.submissions import WRONG_SOFTMAX, digest
from tests.support.synthetic import completed_notebook, write_submission

FIRST = assignment_ids()[0]
# The README's commands, as typed from the repository root; the test checks they are still what the README says.
README_STEPS = [
    "cd autograde",
    f"../.venv/bin/nbgrader generate_assignment {FIRST} --force",
    f"../.venv/bin/nbgrader autograde {FIRST}",
    f"../.venv/bin/nbgrader generate_feedback {FIRST}",
]
RUNTIME = ["course/submitted", "course/autograded", "course/feedback", "course/gradebook.db"]


def snapshot() -> str:
    """The state of what nbgrader's own commands would write in the repository itself (folders and gradebook)."""
    files = [REPO / p for p in RUNTIME if (REPO / p).is_file()]
    return digest(EXERCISES, *(REPO / p for p in RUNTIME if (REPO / p).is_dir())) + repr(
        [(str(f), f.read_bytes()) for f in files])


def readme_section(title: str) -> str:
    """The README's section `title`, up to the next heading (a comment line in a code block is none)."""
    lines = (REPO / "README.md").read_text().splitlines()
    start = lines.index(f"### {title}")
    fenced, section = False, []
    for line in lines[start + 1:]:
        fenced ^= line.startswith("```")
        if not fenced and line.startswith("#"):
            break
        section.append(line)
    return "\n".join(section)


def test_the_readme_still_gives_these_commands():
    section = readme_section("Using nbgrader's own commands")
    for step in README_STEPS:
        assert step in section, f"the README no longer says {step!r}: update README_STEPS and the test below"


@pytest.mark.slow
@pytest.mark.sandbox
def test_nbgrader_autograde_from_the_autograde_folder_grades_as_the_grader_does(compiled_course, graded, tmp_path):
    course = tmp_path / "course"
    shutil.copytree(compiled_course, course)
    (course / ".venv").symlink_to(Path(sys.executable).parent.parent)  # so `../.venv/bin/nbgrader` is the README's
    # As an instructor's shell has it: the virtual environment not activated (its bin/ not on PATH).
    env = {**os.environ, "PATH": os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                                                   if Path(p).resolve() != Path(sys.executable).parent.resolve())}
    # The student "wrong-softmax" of the odd batch (`graded`): its softmax cells lose points, the others keep them.
    write_submission(completed_notebook(FIRST, {"softmax": WRONG_SOFTMAX}), course / "course" / "submitted",
                     "wrong-softmax", FIRST)
    repository_before = snapshot()

    for step in README_STEPS[1:]:
        proc = subprocess.run(shlex.split(step), cwd=course / "autograde", env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, f"{step} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"

    assert snapshot() == repository_before, "nbgrader wrote into the repository"
    # generate_assignment wrote the copy's release folder, exercises/: the README says it is what compiling gives.
    released = course / "exercises" / FIRST / f"{FIRST}.ipynb"
    assert released.read_bytes() == (EXERCISES / FIRST / f"{FIRST}.ipynb").read_bytes()
    executed = nbformat.read(course / "course" / "autograded" / "wrong-softmax" / FIRST / f"{FIRST}.ipynb", 4)
    assert executed.cells and any(c.get("outputs") for c in executed.cells if c.cell_type == "code"), "not executed"
    with Gradebook(f"sqlite:///{course / 'course' / 'gradebook.db'}") as gradebook:
        scores = {c: float(gradebook.find_grade(c, FIRST, FIRST, "wrong-softmax").score) for c in graded_cell_ids(FIRST)}
    expected = {c: float(graded["scores"][("wrong-softmax", FIRST, c)]["score"]) for c in graded_cell_ids(FIRST)}
    assert 0 < sum(expected.values()) < sum(float(graded["scores"][("reference", FIRST, c)]["score"])
                                            for c in graded_cell_ids(FIRST)), "the comparison would prove little"
    assert scores == expected
    feedback = course / "course" / "feedback" / "wrong-softmax" / FIRST / f"{FIRST}.html"
    assert feedback.is_file() and "test_softmax" in feedback.read_text()
