"""A grading worker's start: its kernels' thread count, and its gradebook (scratch, so its commits do not wait for
the disk). One fresh process looks at both, before and after the worker's start."""
import json
import subprocess
import sys

import pytest

from autograde.course import REPO

PROBE = """
import json
import sys
from pathlib import Path
from sqlalchemy import text
from autograde.batch import worker
from autograde.course import prepare_nbgrader
prepare_nbgrader()  # (nbgrader asks the alembic command for its schema version otherwise)
from nbgrader.api import Gradebook

base = Path(sys.argv[1])
seen = {}
def synchronous(name):
    with Gradebook(f"sqlite:///{base}/{name}.db") as gradebook:
        return gradebook.db.execute(text("PRAGMA synchronous")).scalar()
seen["before"] = synchronous("before")
worker.start(base, 2, None, {})
seen["threads"] = worker._worker["kernel"]["threads"]
seen["after"] = synchronous("after")
worker.start(base, 2, None, {"threads": 1, "memory_mib": 2048})
seen["typed threads"] = worker._worker["kernel"]["threads"]
print(json.dumps(seen))
"""


@pytest.fixture(scope="module")
def seen(tmp_path_factory) -> dict:
    """What a fresh process saw: SQLite's ``synchronous`` of a gradebook opened before and after a worker's start
    (given 2 threads per kernel), and the threads its kernels get without and with a typed thread count."""
    proc = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path_factory.mktemp("worker"))], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_a_workers_gradebook_commits_without_waiting_for_the_disk(seen):
    # 0 is OFF (no fsync at each commit); SQLite's default, FULL (2), is what nbgrader gets elsewhere.
    assert seen["before"] == 2
    assert seen["after"] == 0, "a grading worker's gradebook still waits for the disk at each commit"


def test_a_kernel_gets_the_workers_share_of_the_cores_unless_a_thread_count_was_typed(seen):
    assert seen["threads"] == 2
    assert seen["typed threads"] == 1, "--SandboxKernelManager.threads=1 was typed, and the worker gave its kernels 2"
