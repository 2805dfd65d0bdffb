"""Intake: submissions as an LMS exports them, read into nbgrader's layout (:mod:`.lms`, :mod:`.collect`) and each
notebook salvaged and rebuilt on the released one (:mod:`.normalise`)."""
