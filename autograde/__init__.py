"""The instructor's tooling: compile exercise notebooks and grade submissions.

The pipeline reads left to right: ``solutions/<a>/<a>.py`` (jupytext source)
→ :mod:`autograde.compile` → ``exercises/<a>/<a>.ipynb`` (student notebook)
→ submissions, gathered by :mod:`autograde.collect` → :mod:`autograde.grade`
(nbgrader in parallel workers) → ``scores.csv``, ``grades.csv``, and the HTML
of :mod:`autograde.report`.
"""
