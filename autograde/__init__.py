"""The instructor's tooling: compile exercise notebooks and grade submissions.

The pipeline reads left to right: ``solutions/<a>/<a>.py`` (jupytext source)
→ :mod:`autograde.compile` → ``exercises/<a>/<a>.ipynb`` (student notebook)
→ submissions → :mod:`autograde.grade` → ``scores.csv`` and ``grades.csv``.
"""
