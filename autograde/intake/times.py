"""When each submission was handed in, as the export itself says it.

Each system says it in its own place and format, which its adapter reads (:attr:`.adapter.Layout.times`): nbgrader's
``timestamp.txt`` (:mod:`.nbgrader_layout`), Gradescope's ``submission_metadata.yml`` (:mod:`.gradescope_export`),
Blackboard's receipts and file names (:mod:`.blackboard`), Moodle's grading worksheet (:mod:`.moodle`, read where
the worksheet is given), Canvas's ``LATE`` (:mod:`.canvas`: no time, Canvas's gradebook applies its late policy).
A zip entry's date is no evidence (it can be when the teacher downloaded the export): where the export says
nothing else, the time is unknown, not penalised, and listed.

A time without a zone (Moodle's, Blackboard's file name) is kept naive here and read in the due
date's time zone by :mod:`autograde.results.late`, which says so.

The adapters' readers and their evidence's names are kept here under their old names too, for the modules that
read them from here (:mod:`autograde.results.late`, :mod:`autograde.gradescope`).
"""
from __future__ import annotations

from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo

from . import lms
from .adapter import SubmissionTime
from .blackboard import BLACKBOARD_NAME, BLACKBOARD_RECEIPT, blackboard_name, blackboard_receipt
from .canvas import CANVAS
from .gradescope_export import GRADESCOPE, gradescope_created_at
from .moodle import MOODLE, MOODLE_COLUMN, moodle_date, moodle_worksheet_times
from .nbgrader_layout import NBGRADER, NBGRADER_TIMESTAMP, STAMP_SLACK, nbgrader_timestamp

__all__ = ["BLACKBOARD_NAME", "BLACKBOARD_RECEIPT", "CANVAS", "GRADESCOPE", "MOODLE", "MOODLE_COLUMN", "NBGRADER",
           "NBGRADER_TIMESTAMP", "STAMP_SLACK", "SubmissionTime", "blackboard_name", "blackboard_receipt", "evidence",
           "gradescope_created_at", "moodle_date", "moodle_worksheet_times", "nbgrader_timestamp"]


def evidence(layout: str, root: Path, rel: PurePosixPath, entry, zipped: bool,
             blackboard_zone: ZoneInfo | None = None) -> SubmissionTime:
    """When the file `rel` of the export in `root`, read by `layout` as `entry` (:class:`autograde.intake.lms.Entry`),
    was handed in, as the export says (unknown where it says nothing: a zip entry's date is no evidence)."""
    read = lms.LAYOUTS[layout].times
    found = read(root, rel, entry, zipped, blackboard_zone) if read is not None else None
    return found if found is not None else SubmissionTime()

