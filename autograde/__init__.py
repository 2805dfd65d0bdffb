"""The instructor's tooling: compile exercise notebooks and grade submissions (``python -m autograde``).

Compiling: ``solutions/<a>/<a>.py`` (jupytext source) → :mod:`autograde.compile`
→ ``exercises/<a>/<a>.ipynb`` (the student notebook).

Grading (:mod:`autograde.grade` runs the steps in this order; each module
imports only modules of earlier steps):

1. :mod:`autograde.collect` (with :mod:`autograde.lms`): submissions as an LMS exports them → nbgrader's layout;
2. :mod:`autograde.normalise` (with :mod:`autograde.sources`): each notebook read, salvaged, rebuilt on the released one;
3. :mod:`autograde.execute` (with :mod:`autograde.kernel_manager`, :mod:`autograde.sandbox`,
   :mod:`autograde.kernel_guard`): nbgrader runs it, sandboxed and guarded, recording events in cell metadata;
4. :mod:`autograde.classify`: a :class:`~autograde.classify.Status` and a message per test cell, and notes;
5. :mod:`autograde.cache`: results kept between runs, keyed by everything a grade depends on;
6. :mod:`autograde.worker` and :mod:`autograde.run`: one submission in a worker's course; many on an executor;
7. :mod:`autograde.outputs`, :mod:`autograde.feedback`, :mod:`autograde.report` (templates in
   ``autograde/templates``): scores.csv, grades.csv, notes.csv, feedback pages and the report;
8. :mod:`autograde.gradebook`: the grades filled into an LMS gradebook export.
"""
