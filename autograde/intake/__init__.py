"""Intake: submissions as an LMS exports them, read into nbgrader's layout (:mod:`.collect`, by the layout's adapter,
one module per LMS, that the registry :mod:`.lms` lists) and each notebook salvaged and rebuilt on the released one
(:mod:`.normalise`)."""
