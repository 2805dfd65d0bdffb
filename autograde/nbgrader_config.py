"""nbgrader configuration for this course.

The repository root is the course root: the compiled solutions are nbgrader's
source (``autograde/source``, made by ``python -m autograde compile``) and
``exercises/`` is its release folder. Runtime data (gradebook, submitted/,
autograded/, feedback/) stays under ``autograde/`` and is git-ignored.

Run nbgrader's own commands from this folder, e.g.::

    cd autograde && nbgrader autograde 01-weighted-sum

``python -m autograde grade`` reads this file too and only moves the folders
into a scratch course directory, so both paths grade the same way.
"""
import os
import sys
from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput, SaveAutoGrades

c = get_config()  # noqa: F821 (provided by traitlets when nbgrader loads this file)

# nbgrader runs the `alembic` command of its environment each time it opens a gradebook: make it findable when
# that environment is not activated (`../.venv/bin/nbgrader autograde ...`, as the README says).
_bin = os.path.dirname(sys.executable)
if _bin not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _bin + os.pathsep + os.environ.get("PATH", "")

repo = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(repo))  # for autograde.preprocessors when nbgrader runs from this folder
from autograde.execute import GuardedExecute  # noqa: E402
from autograde.preprocessors import StderrIsNotFailure  # noqa: E402

c.CourseDirectory.root = str(repo)
c.CourseDirectory.source_directory = "autograde/source"
c.CourseDirectory.release_directory = "exercises"
c.CourseDirectory.submitted_directory = "autograde/submitted"
c.CourseDirectory.autograded_directory = "autograde/autograded"
c.CourseDirectory.feedback_directory = "autograde/feedback"
c.CourseDirectory.db_url = f"sqlite:///{repo / 'autograde' / 'gradebook.db'}"

# What a student sees in place of a solution.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# A whole notebook runs in well under 20 s; a cell that takes a minute is stuck.
c.Execute.timeout = 60
# Graded kernels are killed, not asked to shut down: nothing in them needs saving (saves ~0.2 s a notebook).
c.Execute.shutdown_kernel = "immediate"

# Student code runs in a bubblewrap sandbox (see autograde/sandbox.py) with these limits. These are the
# defaults of `python -m autograde grade` too: its options (--timeout, --memory, ...) override only what is typed.
c.SandboxKernelManager.sandbox = True
c.SandboxKernelManager.memory_mib = 4096  # address space of a kernel
c.SandboxKernelManager.file_size_mib = 512  # largest file a kernel may write
c.SandboxKernelManager.max_processes = 128  # processes and threads beyond NumPy's and PyTorch's pools (0: no limit)
c.SandboxKernelManager.disk_mib = 512  # the sandbox's /tmp, home included: all a kernel may write (in memory)

# Reading exports: a zip that would expand to more than this is refused as a zip bomb.
c.Collect.max_unzipped_mib = 4096
# Filling an LMS gradebook (--gradebook): students there who handed nothing in get "zero", or "blank" (left as is).
c.GradebookExport.missing = "blank"

# nbgrader's default autograde steps, with execution hardened against broken and hostile
# submissions (autograde/execute.py), plus: stderr of a test cell is not a failure.
c.Autograde.autograde_preprocessors = [GuardedExecute, StderrIsNotFailure, IgnorePattern, ClearMetadataPreprocessor,
                                       LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
