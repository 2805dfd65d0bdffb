"""nbgrader configuration for this course.

The repository root is the course root: ``exercises/`` is nbgrader's release
folder, and its runtime data lives in the git-ignored ``course/`` folder at the
root: the compiled solutions (``course/source``, made by
``python -m autograde compile``), ``course/submitted``, ``course/autograded``,
``course/feedback`` and ``course/gradebook.db``.

Run nbgrader's own commands from this folder, e.g.::

    cd autograde && nbgrader autograde 01-weighted-sum

``python -m autograde grade`` reads this file too and only moves the folders
into a scratch course directory, so both paths grade the same way. The
``autograde`` package is importable here because the project is installed
(editable) in the venv.
"""
from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput, SaveAutoGrades

from autograde.course import prepare_nbgrader
from autograde.run.execute import GuardedExecute, StderrIsNotFailure

c = get_config()  # noqa: F821 (provided by traitlets when nbgrader loads this file)

repo = Path(__file__).resolve().parent.parent
runtime = "course"  # nbgrader's runtime data, git-ignored
c.CourseDirectory.root = str(repo)
c.CourseDirectory.source_directory = f"{runtime}/source"
c.CourseDirectory.release_directory = "exercises"
c.CourseDirectory.submitted_directory = f"{runtime}/submitted"
c.CourseDirectory.autograded_directory = f"{runtime}/autograded"
c.CourseDirectory.feedback_directory = f"{runtime}/feedback"
c.CourseDirectory.db_url = f"sqlite:///{repo / runtime / 'gradebook.db'}"
# nbgrader's own commands create gradebooks too: without this they need the venv's bin folder on PATH (for alembic).
prepare_nbgrader()

# What a student sees in place of a solution.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# A whole notebook runs in well under 20 s; a cell that takes a minute is stuck. A cell's time does not count what its
# kernel spent waiting for a CPU that other programs held (a busy machine costs no points), but whatever that count,
# a cell is stopped after 10 times its limit by the wall clock.
c.Execute.timeout = 60
c.GuardedExecute.timeout_wall_factor = 10
# A whole notebook (kernel starts and reruns after a dead kernel included) gets 600 s: a notebook whose cells each
# stay under the cell limit cannot hold a worker for long; the cell running then and those after it count as timed out.
c.GuardedExecute.notebook_timeout = 600
# Graded kernels are killed, not asked to shut down: nothing in them needs saving (saves ~0.2 s a notebook).
c.Execute.shutdown_kernel = "immediate"

# Student code runs in a bubblewrap sandbox (see autograde/run/sandbox.py) with these limits. These are the
# defaults of `python -m autograde grade` too: its options (--timeout, --memory, ...) override only what is typed,
# and always win, whichever class a value here is set for (`python -m autograde grade --help-all` lists them all).
c.SandboxKernelManager.sandbox = True
c.SandboxKernelManager.memory_mib = 4096  # address space of each process, and all of a kernel's together (cgroup)
c.SandboxKernelManager.file_size_mib = 512  # largest file a kernel may write
c.SandboxKernelManager.max_processes = 128  # processes and threads beyond NumPy's and PyTorch's pools (0: no limit)
c.SandboxKernelManager.disk_mib = 512  # the sandbox's /tmp, home included: all a kernel may write (in memory)

# Reading exports: a zip that would expand to more than this is refused as a zip bomb.
c.Collect.max_unzipped_mib = 4096
# One file of an export (a notebook is a few MiB at most) larger than this is not extracted or copied, but listed.
c.Collect.max_notebook_mib = 50
# Filling an LMS gradebook (--gradebook): students there who handed nothing in get "zero", or "blank" (left as is).
c.GradebookExport.missing = "blank"
# Late penalties (python -m autograde grade, autograde/results/late.py), applied to the totals after grading; no due
# date, no penalty. --due, --late-penalty, --grace, --late-cap and --extensions set these for one run.
c.LatePolicy.due = ""  # with its time zone: "2026-03-01T23:59+01:00" or "2026-03-01T23:59 Europe/Berlin"
c.LatePolicy.penalty = 0.0  # percent of the maximum score for each started unit after the grace period ...
c.LatePolicy.per = "day"  # ... a "day" (24 hours) or an "hour"
c.LatePolicy.grace = 0.0  # minutes
c.LatePolicy.cap = 100.0  # the most ever deducted, in percent of the maximum score
c.LatePolicy.extensions = ""  # CSV: student_id or lms_user_id, and due (a new due date) or days (extra days)

# nbgrader's default autograde steps, with execution hardened against broken and hostile
# submissions (autograde/run/execute.py), plus: stderr of a test cell is not a failure.
c.Autograde.autograde_preprocessors = [GuardedExecute, StderrIsNotFailure, IgnorePattern, ClearMetadataPreprocessor,
                                       LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
