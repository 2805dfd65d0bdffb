"""Due dates, late penalties and extensions (issue 24): the arithmetic, each export's submission time, and the outputs.

The fast tests here take milliseconds: the arithmetic of :mod:`autograde.results.late`, the times
:mod:`autograde.intake.times` reads from exports as each system writes them (via the real
:func:`autograde.intake.collect.collect`), and the writers (grades.csv, the gradebook import, the feedback page, the
report) on synthetic rows. The end-to-end tests grade a few chapter-1 notebooks in a Moodle export through
``python -m autograde grade``.
"""
import os
import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import nbformat
import pytest
from nbgrader.api import Gradebook
from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import AssignLatePenalties
from traitlets import TraitError
from traitlets.config import Config

from autograde import gradebook
from autograde.course import assignment_ids, prepare_nbgrader
from autograde.intake import times
from autograde.intake.collect import Collect, collect
from autograde.pages.feedback import write_feedback
from autograde.pages.report import write_report
from autograde.results.classify import CellResult, Status
from autograde.results.late import Extension, LatePolicy, assess, parse_when, policy_from, read_extensions
from autograde.results.outputs import write_csvs
from tests.support.commands import grade_command, read_rows, run_main, write_zip
from tests.support.scenarios import kept
from tests.support.synthetic import completed_notebook

FIRST = assignment_ids()[0]
BERLIN = ZoneInfo("Europe/Berlin")
DAY, HOUR = 86400.0, 3600.0


def policy(**settings) -> LatePolicy:
    return LatePolicy(**{"due": "2026-03-01T23:59+01:00", "late_penalty": "10%/day", **settings})


def rows(student: str, score: float = 8.0, max_score: float = 10.0, status=Status.PASSED) -> list[CellResult]:
    """Two test cells of `student`'s FIRST worth `score` of `max_score` in all."""
    return [CellResult(student, FIRST, "test_a", score / 2, max_score / 2, status, ""),
            CellResult(student, FIRST, "test_b", score / 2, max_score / 2, status, "")]


# The due date and the rule --------------------------------------------------------------------------------------

def test_a_due_date_is_read_with_its_offset_z_or_zone_name():
    assert parse_when("2026-03-01T23:59+01:00") == datetime(2026, 3, 1, 22, 59, tzinfo=UTC)
    assert parse_when("2026-03-01T22:59Z") == datetime(2026, 3, 1, 22, 59, tzinfo=UTC)
    named = parse_when("2026-07-01T23:59 Europe/Berlin")
    assert named.utcoffset() == timedelta(hours=2), "summer time in Berlin is UTC+2"
    # As instructors write it (issue 33): a space before the time, and before the zone's name.
    spaced = parse_when("2026-03-01 23:59 Europe/Berlin")
    assert spaced == datetime(2026, 3, 1, 22, 59, tzinfo=UTC), spaced


@pytest.mark.parametrize(("text", "says"), [
    ("2026-03-01 23:59 Europe/Berln", "no time zone is named 'Europe/Berln'"),
    ("2026-03-01 Europe/Berlin", "gives no time of day: write it too"),
])
def test_a_due_date_with_a_zone_name_but_a_mistake_says_which(text, says):
    with pytest.raises(ValueError, match=re.escape(says)):
        parse_when(text)


@pytest.mark.parametrize("naive", ["2026-03-01T23:59", "2026-03-01"])
def test_a_due_date_without_a_time_zone_is_refused_with_what_to_write(naive):
    with pytest.raises(ValueError) as refused:
        policy(due=naive).due_date()
    assert "no time zone" in str(refused.value) and "+01:00" in str(refused.value), refused.value


def test_the_rule_is_read_from_late_penalty_or_from_penalty_and_per():
    assert policy(late_penalty="10%/day").rule() == (10.0, "day")
    assert policy(late_penalty="5%/hour").rule() == (5.0, "hour")
    assert policy(late_penalty="2.5 % per hours").rule() == (2.5, "hour")
    assert policy(late_penalty="", penalty=7, per="hour").rule() == (7.0, "hour")
    with pytest.raises(ValueError) as refused:
        policy(late_penalty="10 points a week").rule()
    assert "10%/day" in str(refused.value), refused.value


def test_a_penalty_without_a_due_date_is_said_not_silently_dropped(caplog):
    found, _ = policy_from(Config({"LatePolicy": {"late_penalty": "10%/day"}}))
    assert found.due_date() is None
    assert "no due date" in caplog.text and "10%/day" in caplog.text, caplog.text


@pytest.mark.filterwarnings("ignore:Object of type:Warning")  # (nbgrader's own add_submission, in SQLAlchemy)
def test_it_is_nbgraders_late_submission_plugin_with_one_meaning(tmp_path):
    # nbgrader's own call passes no maximum score: the plugin reads it from nbgrader's gradebook, so 10 %/day for
    # two started days is 2 of a notebook's 10 points whoever calls it (not 1.6, a share of the score of 8).
    prepare_nbgrader()
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as book:
        book.add_assignment(FIRST)
        book.add_notebook(FIRST, FIRST)
        for cell, points in (("test_a", 6.0), ("test_b", 4.0)):
            book.add_grade_cell(cell, FIRST, FIRST, max_score=points, cell_type="code")
        book.add_student("ann")
        book.add_submission(FIRST, "ann")
        grader = AssignLatePenalties(plugin_class=LatePolicy)
        grader.gradebook, grader.notebook_id, grader.assignment_id = book, FIRST, FIRST
        grader.init_plugin()
        plugin = grader.plugin_inst
        plugin.due, plugin.late_penalty = "2026-03-01T23:59+01:00", "10%/day"
        assert isinstance(plugin, LateSubmissionPlugin)
        assert plugin.late_submission_penalty("ann", 8.0, 1.5 * DAY) == pytest.approx(2.0)
    assert policy().late_submission_penalty("ann", 8.0, 1.5 * DAY, 10.0) == pytest.approx(2.0)
    with pytest.raises(TypeError, match="max_score"):  # (called by neither: no maximum to take a share of)
        policy().late_submission_penalty("ann", 8.0, 1.5 * DAY)


# The arithmetic -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seconds, units", [(-5.0, 0), (0.0, 0), (1.0, 1), (DAY, 1), (DAY + 1, 2), (3 * DAY, 3)])
def test_each_started_day_counts(seconds, units):
    assert policy().units_late(seconds) == units


def test_each_started_hour_counts_when_the_rule_is_per_hour():
    assert [policy(late_penalty="5%/hour").units_late(s) for s in (1, HOUR, HOUR + 1, 10 * HOUR)] == [1, 1, 2, 10]


def test_the_grace_period_is_on_time_and_units_count_from_its_end():
    graced = policy(grace=15)
    assert graced.units_late(15 * 60) == 0, "15 minutes late is within 15 minutes' grace"
    assert graced.units_late(15 * 60 + 1) == 1
    assert graced.units_late(DAY + 15 * 60) == 1, "a day after the grace period's end is still the first day"
    assert graced.units_late(DAY + 15 * 60 + 1) == 2


def test_the_cap_is_the_most_ever_deducted_and_never_more_than_the_score():
    capped = policy(cap=30)
    assert capped.percent_deducted(2 * DAY) == 20
    assert capped.percent_deducted(9 * DAY) == 30
    assert capped.late_submission_penalty("ann", 10.0, 9 * DAY, 10.0) == pytest.approx(3.0)
    assert policy().late_submission_penalty("ann", 1.0, 9 * DAY, 10.0) == 1.0, "the final score never goes below 0"


def test_lateness_is_measured_between_instants_across_a_daylight_saving_change():
    # Berlin moved its clocks forward on 2026-03-29: 12:30 the next day by the wall clock is 23.5 real hours.
    rule = policy(due="2026-03-28T12:00 Europe/Berlin", late_penalty="1%/hour")
    submitted = {("ann", FIRST): times.SubmissionTime(datetime(2026, 3, 29, 12, 30, tzinfo=BERLIN), times.NBGRADER)}
    [late] = assess(rows("ann"), submitted, rule).values()
    assert late.seconds_late == 23.5 * HOUR and late.units == 24 and late.late_by_hours == 23.5


def test_times_in_other_zones_are_compared_as_instants():
    # 23:30 in New York is 05:30 the next morning in Berlin: late, whatever either wall clock says.
    submitted = {("ann", FIRST): times.SubmissionTime(datetime(2026, 3, 1, 23, 30, tzinfo=ZoneInfo("America/New_York")),
                                                      times.GRADESCOPE)}
    [late] = assess(rows("ann"), submitted, policy()).values()
    assert late.late_by_hours == pytest.approx(5.52, abs=0.01) and late.penalty == pytest.approx(1.0)
    assert late.submitted_at.isoformat() == "2026-03-02T05:30:00+01:00", "shown in the due date's zone"


# Extensions -----------------------------------------------------------------------------------------------------

def test_extensions_by_student_id_or_lms_user_id_with_a_new_date_or_days(tmp_path):
    path = tmp_path / "extensions.csv"
    path.write_text("student_id,lms_user_id,due,days,assignment\n"
                    "ann,,2026-03-05T12:00,,\n"          # a new date, without a zone: the due date's
                    ",4242,,2,\n"                         # two days, by LMS user id
                    "cat,,,1,02-additive-attention\n")   # for another assignment only
    rule = policy(extensions=str(path))
    found = read_extensions(path, rule.due_date().tzinfo)
    assert found["ann"][0].due.isoformat() == "2026-03-05T12:00:00+01:00"
    assert found["4242"][0].days == 2
    three_days = datetime(2026, 3, 4, 12, 0, tzinfo=timezone(timedelta(hours=1)))
    submitted = {(s, FIRST): times.SubmissionTime(three_days, times.NBGRADER) for s in ("ann", "bob", "cat")}
    got = assess(rows("ann") + rows("bob") + rows("cat"), submitted, rule, found, {"bob": "4242"})
    assert got[("ann", FIRST)].penalty == 0 and got[("ann", FIRST)].late_by_hours == 0
    assert got[("bob", FIRST)].units == 1 and got[("bob", FIRST)].penalty == pytest.approx(1.0)
    assert "extended by 2 day(s)" in got[("bob", FIRST)].explain()
    assert got[("cat", FIRST)].units == 3, "an extension for another assignment does not apply"


def test_the_extension_for_this_assignment_beats_a_general_one_and_else_the_latest_due_wins(tmp_path):
    path = tmp_path / "extensions.csv"
    path.write_text("student_id,lms_user_id,days,assignment\n"
                    f"ann,,3,{FIRST}\n"   # for this assignment: 3 days
                    "ann,,1,\n"           # for any assignment: 1 day, written later
                    "bob,4242,2,\n"       # one row naming both of bob's ids: one extension, not two
                    ",4242,5,\n")         # and a longer one by his LMS user id
    rule = policy(extensions=str(path))
    found = read_extensions(path, rule.due_date().tzinfo)
    three_days = datetime(2026, 3, 4, 12, 0, tzinfo=timezone(timedelta(hours=1)))
    submitted = {(s, FIRST): times.SubmissionTime(three_days, times.NBGRADER) for s in ("ann", "bob")}
    got = assess(rows("ann") + rows("bob"), submitted, rule, found, {"bob": "4242"})
    assert got[("ann", FIRST)].penalty == 0, f"ann's 3 days for {FIRST} lost to a general 1 day: {got[('ann', FIRST)]}"
    assert got[("bob", FIRST)].penalty == 0 and got[("bob", FIRST)].extension == "extended by 5 day(s)", got[("bob", FIRST)]


def test_an_extension_for_no_assignment_of_the_course_is_refused(tmp_path):
    path = tmp_path / "extensions.csv"
    path.write_text("student_id,days,assignment\nann,2,01 Weighted sum\n")
    with pytest.raises(ValueError) as refused:
        read_extensions(path, UTC)
    assert "line 2" in str(refused.value) and "01 Weighted sum" in str(refused.value), refused.value


def test_a_due_date_without_a_time_of_day_is_refused():
    # 2026-03-05 alone would be its first minute, a day earlier than an instructor who typed it meant.
    with pytest.raises(ValueError) as refused:
        parse_when("2026-03-05", UTC, "the extension's due date")
    assert "time of day" in str(refused.value), refused.value


def test_extra_days_keep_the_due_dates_wall_clock_across_daylight_saving():
    due = parse_when("2026-03-28T23:59 Europe/Berlin")
    assert Extension(days=1).applied(due).isoformat() == "2026-03-29T23:59:00+02:00"


def test_a_bad_extensions_file_is_refused_naming_the_line(tmp_path):
    path = tmp_path / "extensions.csv"
    path.write_text("student_id,days\nann,two\n")
    with pytest.raises(ValueError) as refused:
        policy_from(Config({"LatePolicy": {"due": "2026-03-01T23:59+01:00", "extensions": str(path)}}))
    assert "line 2" in str(refused.value) and "'two'" in str(refused.value), refused.value
    path.write_text("name,when\nann,tomorrow\n")
    with pytest.raises(ValueError) as refused:
        read_extensions(path, UTC)
    assert "student_id or lms_user_id" in str(refused.value), refused.value


# Each export's time, as each system writes it --------------------------------------------------------------------

def collected_times(tmp_path, files, *, zipped=True, dates=None):
    """The submission times :func:`collect` reads from an export of `files` (a zip, or a folder)."""
    if zipped:
        source = write_zip(tmp_path / "export.zip", files, dates)
    else:
        source = tmp_path / "export"
        for name, content in files.items():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_text(content)
    return collect(source, tmp_path / "out" / "submitted", [FIRST]).times


def test_nbgrader_timestamp_txt_as_submit_and_zip_collect_write_it(tmp_path):
    files = {f"ann/{FIRST}/{FIRST}.ipynb": "", f"ann/{FIRST}/timestamp.txt": "2026-03-01 22:10:05.123456 UTC",
             f"bob/{FIRST}/{FIRST}.ipynb": "", f"bob/{FIRST}/timestamp.txt": "2026-03-01 23:10:05+01:00\n",
             f"cat/{FIRST}/{FIRST}.ipynb": ""}
    found = collected_times(tmp_path, files, zipped=False)
    assert found[("ann", FIRST)].when == datetime(2026, 3, 1, 22, 10, 5, 123456, tzinfo=UTC)
    assert found[("bob", FIRST)].when == datetime(2026, 3, 1, 22, 10, 5, tzinfo=UTC)
    assert found[("ann", FIRST)].source == times.NBGRADER
    assert found[("cat", FIRST)].when is None, "no timestamp.txt in a folder: unknown"


def test_a_notebook_dated_after_its_nbgrader_timestamp_is_flagged_not_penalised(tmp_path, caplog):
    # nbgrader's timestamp.txt sits in the student's own folder, which the student could write: a notebook modified
    # later than its stamp is listed for the instructor (issue 30), but costs nothing (a copy that kept no dates
    # would make every notebook look later).
    files = {f"ann/{FIRST}/{FIRST}.ipynb": "", f"ann/{FIRST}/timestamp.txt": "2026-03-01 22:10:05 UTC",
             f"bob/{FIRST}/{FIRST}.ipynb": "", f"bob/{FIRST}/timestamp.txt": "2026-03-01 22:10:05 UTC"}
    export = tmp_path / "export"
    for name, content in files.items():
        (export / name).parent.mkdir(parents=True, exist_ok=True)
        (export / name).write_text(content)
    stamp = datetime(2026, 3, 1, 22, 10, 5, tzinfo=UTC).timestamp()
    os.utime(export / f"ann/{FIRST}/{FIRST}.ipynb", (stamp + 3600, stamp + 3600))  # an hour after its stamp
    os.utime(export / f"bob/{FIRST}/{FIRST}.ipynb", (stamp + 5, stamp + 5))  # as nbgrader copies it
    found = collect(export, tmp_path / "out" / "submitted", [FIRST]).times
    assert found[("ann", FIRST)].dated_after_stamp == datetime(2026, 3, 1, 23, 10, 5, tzinfo=UTC)
    assert found[("bob", FIRST)].dated_after_stamp is None, "a notebook copied with its stamp is not flagged"
    due = policy(due="2026-03-01T23:00:00+00:00", late_penalty="10%/day")
    lateness = assess(rows("ann") + rows("bob"), found, due)
    assert lateness[("ann", FIRST)].penalty == 0, "the date of a file the student controls is no penalty"
    assert "NOTEBOOK DATED AFTER ITS TIMESTAMP" in caplog.text and "ann" in caplog.text
    write_report(rows("ann") + rows("bob"), tmp_path / "report.html", 1.0, 2, lateness=lateness)
    report = (tmp_path / "report.html").read_text()
    # Both times in the due date's zone (+00:00 here): the notebook's an hour after the stamp.
    assert "Notebook dated after its timestamp" in report and "2026-03-01T23:10:05+00:00" in report, report[-2000:]
    listed = report[report.index("dated-after-stamp"):]
    assert "<td>ann</td>" in listed and "<td>bob</td>" not in listed.split("</table>")[0]


def test_a_zip_collect_stamp_or_a_zipped_export_is_not_compared_with_the_notebooks_date(tmp_path):
    # zip_collect writes the LMS's time (ISO 8601) beside a copy dated when it ran; a zip dates files in its maker's
    # local time: neither says the notebook was edited after its stamp.
    files = {f"ann/{FIRST}/{FIRST}.ipynb": "", f"ann/{FIRST}/timestamp.txt": "2026-03-01T22:10:05+00:00",
             f"bob/{FIRST}/{FIRST}.ipynb": "", f"bob/{FIRST}/timestamp.txt": "2026-03-01 22:10:05 UTC"}
    (tmp_path / "folder").mkdir()
    (tmp_path / "zip").mkdir()
    found = collected_times(tmp_path / "folder", files, zipped=False)
    assert found[("ann", FIRST)].dated_after_stamp is None, "zip_collect's stamp was compared with the copy's date"
    assert found[("bob", FIRST)].dated_after_stamp is not None, "the test's notebooks are not dated after the stamp"
    zipped = collected_times(tmp_path / "zip", files, zipped=True)
    assert all(t.dated_after_stamp is None for t in zipped.values()), "a zip entry's date was compared"


def test_a_time_record_that_gave_the_time_is_not_listed_as_a_file_not_graded(tmp_path):
    files = {f"ann/{FIRST}/{FIRST}.ipynb": "", f"ann/{FIRST}/timestamp.txt": "2026-03-01 22:10:05.123456 UTC",
             f"ann/{FIRST}/notes.txt": "my notes", f"bob/{FIRST}/{FIRST}.ipynb": "",
             f"bob/{FIRST}/timestamp.txt": "not a time"}
    for name, content in files.items():
        (tmp_path / "export" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "export" / name).write_text(content)
    listed = {u.path for u in collect(tmp_path / "export", tmp_path / "out" / "submitted", [FIRST]).unmatched}
    assert f"ann/{FIRST}/timestamp.txt" not in listed, "the record the time was read from is listed as not graded"
    # A stray file, and a record that said no time, are still listed: nothing is dropped unread.
    assert {f"ann/{FIRST}/notes.txt", f"bob/{FIRST}/timestamp.txt"} <= listed, listed


def test_gradescope_created_at_from_submission_metadata(tmp_path):
    metadata = ("submission_3001:\n  :submitters:\n  - :name: Ann Lee\n    :sid: '1001'\n    :email: ann@example.edu\n"
                "  :created_at: 2026-03-01 23:58:41.112233000 -08:00\n  :score: 10.0\n  :status: processed\n")
    found = collected_times(tmp_path, {"submission_metadata.yml": metadata,
                                       f"submission_3001/{FIRST}.ipynb": ""})
    when = found[("Ann-Lee", FIRST)]
    assert when.source == times.GRADESCOPE
    assert when.when == datetime(2026, 3, 2, 7, 58, 41, 112233, tzinfo=UTC)


RECEIPT = """\
Name: Ann Lee (alee)
Assignment: Homework 01
Date Submitted: Monday, 2 March 2026 09:15:30 o'clock CET
Current Grade: Needs Grading

Submission Field:
There is no student submission text data for this assignment.

Comments:
There are no student comments for this assignment.

Files:
\tOriginal filename: 01-weighted-sum.ipynb
\tFilename: Homework 01_alee_attempt_2026-03-02-09-15-30_01-weighted-sum.ipynb
"""


def test_blackboard_receipt_date_submitted_else_the_attempt_time_in_the_name(tmp_path):
    files = {"Homework 01_alee_attempt_2026-03-02-09-15-30_01-weighted-sum.ipynb": "",
             "Homework 01_alee_attempt_2026-03-02-09-15-30.txt": RECEIPT,
             "Homework 01_bkim_attempt_2026-03-01-20-00-00_01-weighted-sum.ipynb": ""}
    found = collected_times(tmp_path, files, zipped=False)
    assert found[("alee", FIRST)].source == times.BLACKBOARD_RECEIPT
    assert found[("alee", FIRST)].when == datetime(2026, 3, 2, 8, 15, 30, tzinfo=UTC)
    assert found[("bkim", FIRST)].source == times.BLACKBOARD_NAME
    assert found[("bkim", FIRST)].when == datetime(2026, 3, 1, 20, 0), "the name's time has no zone: naive"
    us = times.blackboard_receipt("Date Submitted: Sunday, March 1, 2026 9:01:55 PM EST\n")
    assert us == datetime(2026, 3, 2, 2, 1, 55, tzinfo=UTC)
    # A 12-hour clock without a zone: PM is the afternoon, not a zone name to cut off (naive: read in the due's zone).
    assert times.blackboard_receipt("Date Submitted: Sunday, March 1, 2026 10:10:05 PM\n") == datetime(2026, 3, 1, 22, 10, 5)


@pytest.mark.parametrize("stamp, zone, expected", [
    # An abbreviation several zones use is read in the server's zone where one is given, else not guessed.
    ("Sunday, 1 March 2026 22:10:05 o'clock IST", "Asia/Kolkata", datetime(2026, 3, 1, 16, 40, 5, tzinfo=UTC)),
    ("Sunday, 1 March 2026 22:10:05 o'clock IST", None, datetime(2026, 3, 1, 22, 10, 5)),
    ("Sunday, 1 March 2026 22:10:05 o'clock CST", "Asia/Shanghai", datetime(2026, 3, 1, 14, 10, 5, tzinfo=UTC)),
    ("Sunday, 1 March 2026 22:10:05 o'clock CST", None, datetime(2026, 3, 1, 22, 10, 5)),
    ("Sunday, March 1, 2026 9:01:55 PM CST", "America/Chicago", datetime(2026, 3, 2, 3, 1, 55, tzinfo=UTC)),
    # The hour daylight saving time repeats: the abbreviation says which of the two it was.
    ("Sunday, 25 October 2026 02:30:00 o'clock CEST", "Europe/Berlin", datetime(2026, 10, 25, 0, 30, tzinfo=UTC)),
    ("Sunday, 25 October 2026 02:30:00 o'clock CET", "Europe/Berlin", datetime(2026, 10, 25, 1, 30, tzinfo=UTC)),
    # A zone that does not use the abbreviation then: the abbreviation, where only one zone uses it, wins.
    ("Sunday, 1 March 2026 22:10:05 o'clock CET", "Asia/Kolkata", datetime(2026, 3, 1, 21, 10, 5, tzinfo=UTC)),
])
def test_blackboard_zone_reads_the_receipts_abbreviation(stamp, zone, expected):
    got = times.blackboard_receipt(f"Date Submitted: {stamp}\n", ZoneInfo(zone) if zone else None)
    assert got == expected and (got.tzinfo is None) == (expected.tzinfo is None), got


def test_blackboard_zone_dates_the_attempt_time_in_the_name_and_a_bad_zone_is_refused(tmp_path):
    files = {"Homework 01_bkim_attempt_2026-03-01-20-00-00_01-weighted-sum.ipynb": ""}
    source = tmp_path / "export"
    source.mkdir()
    (source / next(iter(files))).write_text("")
    settings = Collect(blackboard_zone="Asia/Kolkata")
    found = collect(source, tmp_path / "out" / "submitted", [FIRST], settings=settings).times
    assert found[("bkim", FIRST)].when == datetime(2026, 3, 1, 14, 30, tzinfo=UTC)
    with pytest.raises(TraitError, match="Mars/Olympus"):
        Collect(blackboard_zone="Mars/Olympus")
    # On the command line: a usage error before anything is graded or written.
    status, _, err = run_main("grade", str(source), "--out", str(tmp_path / "graded"), "--blackboard-zone", "Mars/Olympus")
    assert status == 2 and "Mars/Olympus" in err and "IANA" in err, err
    assert not (tmp_path / "graded").exists() or not list((tmp_path / "graded").glob("*.csv"))


def test_moodle_worksheet_last_modified_submission(tmp_path):
    path = tmp_path / "worksheet.csv"
    path.write_text(MOODLE_WORKSHEET)
    assert times.moodle_worksheet_times(path) == {"123456": datetime(2026, 3, 1, 22, 10),
                                                  "123457": datetime(2026, 3, 3, 9, 5), "123458": None,
                                                  "123459": None}


@pytest.mark.parametrize("name", [f"Ann Lee_123456_assignsubmission_file_/{FIRST}.ipynb",  # Moodle, no worksheet
                                  f"Ann-Lee/{FIRST}.ipynb"])  # a folder per student
def test_a_zip_entrys_date_is_no_evidence_the_time_is_unknown(tmp_path, caplog, name):
    # A zip's dates can be when the teacher downloaded it: a held-out Moodle export graded without its worksheet
    # cost six of seven students 90 % when they were read as submission times.
    found = collected_times(tmp_path, {name: ""}, dates={name: (2026, 3, 9, 10, 30, 0)})
    when = found.get(("Ann-Lee", FIRST), times.SubmissionTime())
    assert when.when is None, f"a zip entry's date was taken as the submission time: {when}"
    [late] = assess(rows("Ann-Lee"), found, policy()).values()
    assert late.unknown and late.penalty == 0 and late.columns()["time_source"] == "unknown"
    assert "TIME UNKNOWN" in caplog.text and "Ann-Lee" in caplog.text


def test_canvas_late_marker_is_reported_and_never_penalised(tmp_path):
    found = collected_times(tmp_path, {f"leeann_LATE_12345_900001_{FIRST}.ipynb": ""})
    assert found[("leeann", FIRST)].marked_late and found[("leeann", FIRST)].lms_policy
    [late] = assess(rows("leeann"), found, policy()).values()
    assert late.penalty == 0 and not late.unknown and "own late policy" in late.explain()


def test_a_submission_whose_time_is_unknown_is_not_penalised_and_is_listed(tmp_path, caplog):
    got = assess(rows("ann") + rows("bob", status=Status.MISSING, score=0), {}, policy())
    assert got[("ann", FIRST)].unknown and got[("ann", FIRST)].penalty == 0
    assert got[("ann", FIRST)].columns()["time_source"] == "unknown"
    assert not got[("bob", FIRST)].unknown, "nothing handed in: no time to know"
    assert "TIME UNKNOWN" in caplog.text and "ann" in caplog.text


# The outputs ----------------------------------------------------------------------------------------------------

MOODLE_WORKSHEET = """\
Identifier,Full name,Email address,Status,Grade,Maximum grade,Grade can be changed,Last modified (submission),\
Last modified (grade),Feedback comments
Participant 123456,Ann Lee,ann@example.edu,Submitted for grading,,100.00,Yes,"Sunday, 1 March 2026, 10:10 PM",-,
Participant 123457,Bob Kim,bob@example.edu,Submitted for grading,,100.00,Yes,"Tuesday, 3 March 2026, 9:05 AM",-,
Participant 123458,Cat Roy,cat@example.edu,Submitted for grading,,100.00,Yes,-,-,
Participant 123459,Dan Fox,dan@example.edu,No submission,,100.00,Yes,-,-,
"""


@pytest.mark.parametrize("header, ann, bob", [
    ("ID,Vollständiger Name,Status,Bewertung,Zuletzt geändert (Abgabe)", "Sonntag, 1. März 2026, 22:10",
     "Dienstag, 3. März 2026, 09:05"),
    ("Identifiant,Nom complet,Statut,Note,Dernière modification (travail remis)", "dimanche 1 mars 2026, 22:10",
     "mardi 3 mars 2026, 09:05"),
    ("Identificador,Nombre completo,Estatus,Calificación,Última modificación (entrega)",
     "domingo, 1 de marzo de 2026, 22:10", "martes, 3 de marzo de 2026, 09:05")])
def test_a_moodle_worksheet_in_german_french_or_spanish_gives_the_submission_times(tmp_path, header, ann, bob):
    path = tmp_path / "worksheet.csv"
    path.write_text(f'{header}\nTeilnehmer/in 123456,Ann Lee,x,,"{ann}"\nTeilnehmer/in 123457,Bob Kim,x,,"{bob}"\n'
                    'Teilnehmer/in 123458,Cat Roy,x,,-\n')
    assert times.moodle_worksheet_times(path) == {"123456": datetime(2026, 3, 1, 22, 10),
                                                  "123457": datetime(2026, 3, 3, 9, 5), "123458": None}


def test_the_penalty_shows_in_grades_csv_the_gradebook_import_the_feedback_and_the_report(tmp_path, monkeypatch):
    monkeypatch.setattr("autograde.pages.report._figure", lambda *args: "")  # (no plot here: its text is tested)
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text(MOODLE_WORKSHEET)
    ids = {"Ann-Lee": "123456", "Bob-Kim": "123457", "Cat-Roy": "123458"}
    graded = rows("Ann-Lee", 10) + rows("Bob-Kim", 10) + rows("Cat-Roy", 6)
    got = assess(graded, {}, policy(), {}, ids, worksheet)
    write_csvs(graded, tmp_path, ids, got)
    grades = {r["student_id"]: r for r in read_rows(tmp_path / "grades.csv")}
    bob = grades["Bob-Kim"]  # due Sunday 23:59, handed in Tuesday 09:05: two started days
    assert (bob["score"], bob["raw_score"], bob["late_penalty"]) == ("8.0", "10.0", "2.0"), bob
    assert bob["submitted_at"] == "2026-03-03T09:05:00+01:00" and bob["late_by"] == "33.1"
    assert bob["time_source"].startswith(times.MOODLE)
    assert (grades["Ann-Lee"]["score"], grades["Ann-Lee"]["late_by"]) == ("10.0", "0")
    assert grades["Cat-Roy"]["time_source"] == "unknown" and grades["Cat-Roy"]["score"] == "6.0"

    gradebook.fill(worksheet, tmp_path / "scores.csv", tmp_path, "blank", None, [FIRST])
    filled = {r["Identifier"]: r["Grade"] for r in read_rows(tmp_path / "gradebook-import.csv")}
    assert filled["Participant 123457"] == "80", f"the import must get the final score: {filled}"
    assert filled["Participant 123456"] == "100" and filled["Participant 123458"] == "60"

    write_feedback(graded, tmp_path / "feedback", {}, ids, got)
    page = (tmp_path / "feedback" / "Bob-Kim.html").read_text()
    for said in ("Late penalty: 2 points deducted", "8 / 10 points", "2026-03-01T23:59+01:00",
                 "2026-03-03T09:05+01:00", "33.1 hours late", "10% of the maximum score for each started day late"):
        assert said in page, f"the feedback page does not say {said!r}"
    assert "Late penalty" not in (tmp_path / "feedback" / "Ann-Lee.html").read_text()

    report = write_report(graded, tmp_path / "report.html", 1.0, 3, {}, got).read_text()
    assert "Late submissions" in report and "Bob-Kim" in report.split("Late submissions")[1]
    unknown = report.split("Submission time unknown")[1]
    assert "Cat-Roy" in unknown and "Ann-Lee" not in unknown


def test_the_command_refuses_a_due_date_without_a_zone_before_grading(tmp_path):
    (tmp_path / "export").mkdir()
    status, _, err = run_main("grade", str(tmp_path / "export"), "--out", str(tmp_path / "out"),
                              "--due", "2026-03-01T23:59", "--late-penalty", "10%/day")
    assert status == 2 and "no time zone" in err, err
    assert not (tmp_path / "out").exists(), "nothing may be written before the due date is understood"


def test_the_late_settings_change_no_cache_key():
    from autograde.grade import settings_in_force

    plain = settings_in_force({})
    assert settings_in_force({"LatePolicy": {"due": "2026-03-01T23:59+01:00", "late_penalty": "10%/day",
                                             "cap": 50.0}}) == plain


# End to end: a Moodle export through `python -m autograde grade` -------------------------------------------------

@pytest.fixture(scope="module")
def late_runs():
    """Four students' completed chapter-1 notebooks in a Moodle export (a folder: no zip dates), the grading
    worksheet with their times, and an extensions CSV giving Cat two more days, graded into ``out``; and graded
    into ``out-rerun`` twice, the second time with the due date a day later. (A kept scenario:
    tests/support/scenarios.py.)"""
    return kept("late-moodle", __file__, _grade_late_class)


def _grade_late_class(folder: Path) -> dict:
    export = folder / "export"
    reference = nbformat.writes(completed_notebook(FIRST))
    for name in ("Ann Lee_123456", "Bob Kim_123457", "Cat Roy_123458", "Eve Ng_123460"):
        (export / f"{name}_assignsubmission_file_").mkdir(parents=True)
        (export / f"{name}_assignsubmission_file_" / f"{FIRST}.ipynb").write_text(reference)
    worksheet = MOODLE_WORKSHEET.replace(
        "Cat Roy,cat@example.edu,Submitted for grading,,100.00,Yes,-",
        'Cat Roy,cat@example.edu,Submitted for grading,,100.00,Yes,"Tuesday, 3 March 2026, 8:00 PM"')
    (folder / "worksheet.csv").write_text(worksheet)  # Eve has no row: her time is unknown
    (folder / "extensions.csv").write_text("lms_user_id,days\n123458,2\n")
    first = grade_late(folder, folder / "out", "2026-03-01T23:59+01:00")
    rerun_first = grade_late(folder, folder / "out-rerun", "2026-03-01T23:59+01:00")
    before = read_rows(folder / "out-rerun" / "grades.csv") if rerun_first.returncode == 0 else []
    return {"folder": folder, "first": first, "rerun_first": rerun_first, "before": before,
            "rerun": grade_late(folder, folder / "out-rerun", "2026-03-02T23:59+01:00")}


def grade_late(folder, out, due):
    return grade_command(folder / "export", out, "--assignment", FIRST, "--jobs", "1",
                         "--gradebook", str(folder / "worksheet.csv"), "--due", due, "--late-penalty", "10%/day",
                         "--extensions", str(folder / "extensions.csv"))


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_moodle_export_with_times_and_extensions_end_to_end(late_runs):
    out, proc = late_runs["folder"] / "out", late_runs["first"]
    assert proc.returncode == 0, proc.stderr
    grades = {r["student_id"]: r for r in read_rows(out / "grades.csv")}
    assert set(grades) == {"Ann-Lee", "Bob-Kim", "Cat-Roy", "Eve-Ng"}
    full = float(grades["Ann-Lee"]["max_score"])
    assert all(float(g["raw_score"]) == full > 0 for g in grades.values()), grades
    bob, cat, eve = grades["Bob-Kim"], grades["Cat-Roy"], grades["Eve-Ng"]
    assert float(bob["late_penalty"]) == pytest.approx(0.2 * full) and float(bob["score"]) == pytest.approx(0.8 * full)
    assert float(cat["late_penalty"]) == 0 and float(cat["late_by"]) == 0, "Cat's two extra days cover her"
    assert eve["time_source"] == "unknown" and eve["submitted_at"] == "" and float(eve["score"]) == full
    assert "TIME UNKNOWN" in proc.stderr and "Eve-Ng" in proc.stderr
    assert "1 submission(s) penalised, 1 whose time is unknown" in proc.stdout

    filled = {r["Identifier"]: r["Grade"] for r in read_rows(out / "gradebook-import.csv")}
    assert filled["Participant 123457"] == "80" and filled["Participant 123456"] == "100", filled
    page = (out / "feedback" / "Bob-Kim.html").read_text()
    assert "Late penalty:" in page and "2 started days late" in page and "2026-03-03T09:05+01:00" in page
    # The heading shows the final score: the summary under it must not read as if nothing were deducted.
    assert "full marks, before the late penalty below" in page, "the summary says full marks with a penalty taken"
    report = (out / "report.html").read_text()
    assert "Bob-Kim" in report.split("Late submissions")[1].split("Submission time unknown")[0]
    assert "Eve-Ng" in report.split("Submission time unknown")[1]


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_changed_due_date_gives_the_new_penalty_from_cached_grades(late_runs):
    out = late_runs["folder"] / "out-rerun"
    assert late_runs["rerun_first"].returncode == 0, late_runs["rerun_first"].stderr
    before = {r["student_id"]: r for r in late_runs["before"]}
    # A day later: Bob is now one started day late, and nothing is graded again.
    proc = late_runs["rerun"]
    assert proc.returncode == 0, proc.stderr
    assert "0 graded now, 4 unchanged" in proc.stdout, proc.stdout
    after = {r["student_id"]: r for r in read_rows(out / "grades.csv")}
    full = float(after["Bob-Kim"]["max_score"])
    assert float(before["Bob-Kim"]["late_penalty"]) == pytest.approx(0.2 * full)
    assert float(after["Bob-Kim"]["late_penalty"]) == pytest.approx(0.1 * full), after["Bob-Kim"]
    filled = {r["Identifier"]: r["Grade"] for r in read_rows(out / "gradebook-import.csv")}
    assert filled["Participant 123457"] == "90", filled


def test_a_due_date_is_refused_for_a_run_that_grades_several_assignments(tmp_path):
    # A stray notebook of another chapter in the export: one due date would charge it against this one's deadline.
    from autograde.grade import grade

    second = assignment_ids()[1]
    for student, assignment in (("ann", FIRST), ("bob", second)):
        (tmp_path / "class" / student / assignment).mkdir(parents=True)
        (tmp_path / "class" / student / assignment / f"{assignment}.ipynb").write_text("not JSON")
    with pytest.raises(ValueError) as refused:
        grade(tmp_path / "class", tmp_path / "out", progress=False, jobs=1, sandbox=False,
              overrides={"LatePolicy": {"due": "2026-03-01T23:59+01:00"}})
    assert "--assignment" in str(refused.value) and second in str(refused.value), refused.value
    assert not (tmp_path / "out" / "grades.csv").exists(), "a refused run wrote grades"
    # One assignment named: graded.
    result = grade(tmp_path / "class", tmp_path / "out", [FIRST], progress=False, jobs=1, sandbox=False,
                   overrides={"LatePolicy": {"due": "2026-03-01T23:59+01:00"}})
    assert {r.assignment for r in result.rows} == {FIRST}
