"""The grading command's settings, without grading a notebook in a kernel (issue 19): how many submissions are
graded at once, and which setting is in force when the config file and the command line both set one."""
import os

import autograde.grade as grading
from autograde.course import assignment_ids

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
