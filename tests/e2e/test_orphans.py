"""A grading command that is killed takes its worker processes with it: none grades on unseen."""
import shutil
import signal
import subprocess
import sys
import time

import psutil
import pytest

from autograde.course import EXERCISES, REPO, assignment_ids

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

FIRST = assignment_ids()[0]


def test_killing_the_grading_command_ends_its_workers(tmp_path):
    for student in ("ann", "bob", "cat", "dan", "eve", "fay"):
        target = tmp_path / "class" / student / FIRST / f"{FIRST}.ipynb"
        target.parent.mkdir(parents=True)
        shutil.copy(EXERCISES / FIRST / f"{FIRST}.ipynb", target)
    command = subprocess.Popen([sys.executable, "-m", "autograde", "grade", str(tmp_path / "class"),
                                "--out", str(tmp_path / "out"), "--jobs", "2", "--quiet"],
                               cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        main = psutil.Process(command.pid)
        deadline = time.monotonic() + 120
        workers = []
        while len(workers) < 3 and time.monotonic() < deadline and command.poll() is None:
            time.sleep(0.5)
            workers = [p for p in main.children() if "multiprocessing" in " ".join(p.cmdline())]
        # Two workers and multiprocessing's resource tracker.
        assert len(workers) == 3, f"the command did not start the processes to watch: {main.children()}"
    finally:
        command.send_signal(signal.SIGKILL)
        command.wait()
    gone, alive = psutil.wait_procs(workers, timeout=30)
    for process in alive:  # (do not leave them to the next test)
        process.kill()
    assert not alive, f"{[p.cmdline()[-1][:60] for p in alive]} kept running 30 s after the command was killed"
