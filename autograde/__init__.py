"""The instructor's tooling: compile exercise notebooks and grade submissions (``python -m autograde``).

Compiling: ``solutions/<a>/<a>.py`` (jupytext source) → :mod:`autograde.compile`
→ ``exercises/<a>/<a>.ipynb`` (the student notebook).

Grading (:mod:`autograde.grade` runs the steps) is layered in this order; a module imports only from its own
layer or earlier ones (``tests/unit/test_package.py`` checks it):

0. the course, shared by every step: :mod:`autograde.course` (paths, settings, nbgrader courses),
   :mod:`autograde.reference` (the solutions as code), :mod:`autograde.sources` (code read without running it);
1. :mod:`autograde.intake`: submissions as an LMS exports them → nbgrader's layout (``collect``, ``lms``); each
   notebook read, salvaged, rebuilt on the released one (``normalise``);
2. :mod:`autograde.run`: nbgrader runs a notebook (``execute``, its cells timed by ``time_limits`` and ``clock``) in a
   sandboxed (``kernel_manager``, ``sandbox``, ``cgroups``) kernel, its test cells in a checker process (``checker``,
   ``checker_process``, ``lent``, ``memory``) that queries the kernel's agent (``agent``, ``probes``) over data-only
   frames (``frames``, ``wire``), recording events in cell metadata (``records``);
3. :mod:`autograde.results`: a :class:`~autograde.results.classify.Status` and a message per test cell, and notes
   (``classify``, ``tracebacks``); results kept between runs, keyed by everything a grade depends on (``cache``);
   scores.csv, grades.csv, notes.csv (``outputs``);
4. :mod:`autograde.batch`: one submission in a worker's course (``worker``); many on an executor (``pool``);
5. :mod:`autograde.pages`: feedback pages and the report (``feedback``, ``outline``, ``report``; templates in
   ``autograde/pages/templates``, rendered by ``render``);
6. :mod:`autograde.gradebook`: the grades filled into an LMS gradebook export;
7. the commands: :mod:`autograde.grade` (with :mod:`autograde.output_folder`, the one-link swap of --out), :mod:`autograde.compile`, ``__main__`` (the command line).
"""
