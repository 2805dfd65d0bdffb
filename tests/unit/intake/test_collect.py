"""Submissions as instructors get them (LMS exports, zips, rosters) are mapped to students and assignments."""
import csv
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograde.course import REPO, assignment_ids
from autograde.intake.collect import clean_stem, collect, match_assignment
from tests.support.scenarios import kept
from tests.support.synthetic import completed_notebook

ASSIGNMENTS = assignment_ids()
FIRST = ASSIGNMENTS[0]


def touch(path, text="{}", mtime=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


@pytest.mark.parametrize(("name", "expected"), [
    ("01-weighted-sum.ipynb", "01-weighted-sum"),
    ("Copy of 01-weighted-sum (1).ipynb", "01-weighted-sum"),
    ("alice_1234_03-Self-Attention.ipynb", "03-self-attention"),
    ("homework 02.ipynb", "02-additive-attention"),
    ("04-long-sequences-checkpoint.ipynb", "04-long-sequences"),
    ("notes.ipynb", None),
    ("01 and 02.ipynb", None),
])
def test_assignment_from_file_name(name, expected):
    assert match_assignment(name, ASSIGNMENTS) == expected, clean_stem(name)


def test_lms_export_folder(tmp_path):
    src = tmp_path / "export"
    touch(src / "alice_123_01-weighted-sum.ipynb")
    touch(src / "bob_9_Copy of 01-weighted-sum (1).ipynb")
    touch(src / "carol_notes.txt")
    touch(src / "dave" / "my homework 03.ipynb")
    touch(src / "dave" / "scratch.ipynb")
    touch(src / "erin" / "01-weighted-sum.ipynb", mtime=1_000_000)
    touch(src / "erin" / "01-weighted-sum (2).ipynb", mtime=2_000_000)
    touch(src / "frank" / FIRST / f"{FIRST}.ipynb")  # nbgrader's layout
    got = collect(src, tmp_path / "out", ASSIGNMENTS)
    assert sorted(got.submissions) == [("alice", FIRST), ("bob", FIRST), ("dave", "03-self-attention"),
                                       ("erin", FIRST), ("frank", FIRST)]
    assert got.students == ["alice", "bob", "dave", "erin", "frank"]
    reasons = {u.path: u.reason for u in got.unmatched}
    assert "not a notebook" in reasons["carol_notes.txt"]
    assert "names none" in reasons["dave/scratch.ipynb"]
    assert "newer" in reasons["erin/01-weighted-sum.ipynb"]  # the (2) copy is newer and is the one graded
    assert got.submissions[("erin", FIRST)].read_text() == "{}"
    assert (src / "erin" / "01-weighted-sum.ipynb").exists(), "inputs must not be moved or changed"


def test_zip_is_read_and_cannot_write_outside(tmp_path):
    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("alice_01-weighted-sum.ipynb", "{}")
        z.writestr("../escaped_01-weighted-sum.ipynb", "{}")
        z.writestr("__MACOSX/._alice_01-weighted-sum.ipynb", "junk")
    got = collect(archive, tmp_path / "out" / "submitted", ASSIGNMENTS)
    assert list(got.submissions) == [("alice", FIRST)]
    # Refused, and said so: one level up from the extraction folder is still inside its scratch folder (removed
    # with it), so the files' absence alone would not show that the entry was kept in.
    reasons = {u.path: u.reason for u in got.unmatched}
    assert reasons["../escaped_01-weighted-sum.ipynb"].startswith("refused"), reasons
    assert not (tmp_path / "out" / "escaped_01-weighted-sum.ipynb").exists()
    assert not any(p.name.startswith("escaped") for p in tmp_path.rglob("*"))


def test_roster_adds_missing_students_and_reports_strangers(tmp_path):
    src = tmp_path / "export"
    touch(src / "alice_01-weighted-sum.ipynb")
    touch(src / "mallory_01-weighted-sum.ipynb")
    roster = touch(tmp_path / "roster.csv", "student_id,name\nalice,Alice\nbob,Bob\n")
    got = collect(src, tmp_path / "out", ASSIGNMENTS, roster=roster)
    assert got.students == ["alice", "bob"]
    assert list(got.submissions) == [("alice", FIRST)]
    assert any("not in the roster" in u.reason for u in got.unmatched if u.path.startswith("mallory"))


def test_bad_roster_is_a_clear_error(tmp_path):
    roster = touch(tmp_path / "roster.csv", "name\nalice\n")
    touch(tmp_path / "export" / "a_01-weighted-sum.ipynb")
    with pytest.raises(ValueError, match="student_id"):
        collect(tmp_path / "export", tmp_path / "out", ASSIGNMENTS, roster=roster)


@pytest.mark.slow
@pytest.mark.sandbox
def test_grading_an_lms_zip_end_to_end():
    run = kept("lms-zip", __file__, _grade_an_lms_zip)
    grades = {r["student_id"]: r for r in run["grades"]}
    assert float(grades["alice"]["score"]) == float(grades["alice"]["max_score"]) > 0
    assert float(grades["bob"]["score"]) == 0
    assert [r["path"] for r in run["unmatched"]] == ["bob_readme.txt"]
    assert "1 file(s) not graded" in run["stdout"]


def _grade_an_lms_zip(base: Path) -> dict:
    """A zip with one notebook under a Colab-style name and one stray file, graded with a roster of two: what
    grades.csv and unmatched.csv say, and what the command printed."""
    archive = base / "export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(f"alice_77_Copy of {FIRST} (1).ipynb", nbformat.writes(completed_notebook(FIRST)))
        z.writestr("bob_readme.txt", "hello")
    roster = touch(base / "roster.csv", "student_id\nalice\nbob\n")
    out = base / "grades"
    proc = subprocess.run([sys.executable, "-m", "autograde", "grade", str(archive), "--out", str(out),
                           "--roster", str(roster), "--assignment", FIRST, "--quiet"],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with open(out / "grades.csv", newline="") as f, open(out / "unmatched.csv", newline="") as g:
        return {"grades": list(csv.DictReader(f)), "unmatched": list(csv.DictReader(g)), "stdout": proc.stdout}


# Issue 19: instructor data is never lost or changed by surprise ----------------------------------------------

def test_a_renamed_notebook_in_the_nbgrader_layout_is_the_same_notebook(tmp_path):
    # Colab's and Drive's default names; the others in the class kept the exact name, so the layout is nbgrader's.
    src = tmp_path / "class"
    for student in ("alice", "bob", "dave"):
        touch(src / student / FIRST / f"{FIRST}.ipynb")
    touch(src / "carol" / FIRST / f"Copy of {FIRST}.ipynb", '{"carol": 1}')
    touch(src / "erin" / FIRST / f"{FIRST} (1).ipynb", '{"erin": 1}')
    touch(src / "frank" / FIRST / f"{FIRST}-checkpoint.ipynb", '{"frank": 1}')
    got = collect(src, tmp_path / "out" / "submitted", ASSIGNMENTS)
    assert got.layout == "nbgrader", got.layout
    missing = [s for s in ("carol", "erin", "frank") if (s, FIRST) not in got.submissions]
    assert not missing, f"renamed notebooks not graded: {missing}; unmatched: {got.unmatched}"
    assert got.submissions[("carol", FIRST)].read_text() == '{"carol": 1}'


GRADESCOPE_DOTS = """\
submission_101:
  :submitters:
  - :name: ..
    :sid: '1001'
submission_102:
  :submitters:
  - :name: Alice Smith
    :sid: '1002'
"""


@pytest.mark.parametrize(("files", "refused"), [
    ({f"Homework 01_.._attempt_2024-03-01-10-00-00_{FIRST}.ipynb": "{}",  # Blackboard's user name
      f"Homework 01_alice_attempt_2024-03-01-10-00-00_{FIRST}.ipynb": "{}"},
     f"Homework 01_.._attempt_2024-03-01-10-00-00_{FIRST}.ipynb"),
    ({"submission_metadata.yml": GRADESCOPE_DOTS,  # a Gradescope submitter named ".."
      f"submission_101/{FIRST}.ipynb": "{}", f"submission_102/{FIRST}.ipynb": "{}"},
     f"submission_101/{FIRST}.ipynb"),
])
def test_a_student_id_that_climbs_out_is_refused_in_every_layout(tmp_path, files, refused):
    src = tmp_path / "export"
    for name, text in files.items():
        touch(src / name, text)
    dest = tmp_path / "run" / "submitted"
    got = collect(src, dest, ASSIGNMENTS)
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.ipynb")
                     if not p.is_relative_to(src) and not p.resolve().is_relative_to(dest.resolve()))
    assert written == [], f"a notebook was written outside {dest}: {written}"
    assert all(".." not in s for s, _ in got.submissions), got.submissions
    assert ".." not in got.students, got.students
    assert len(got.submissions) == 1, got.submissions
    reasons = {u.path: u.reason for u in got.unmatched}
    assert "student id" in reasons.get(refused, "") and reasons[refused].startswith("refused"), reasons


def test_a_student_id_from_a_pattern_or_a_roster_that_is_no_safe_folder_name_is_refused(tmp_path):
    src = tmp_path / "export"
    touch(src / f"dot.-{FIRST}.ipynb")  # the pattern below reads the student id "."
    touch(src / f"dotalice-{FIRST}.ipynb")
    dest = tmp_path / "run" / "submitted"
    got = collect(src, dest, ASSIGNMENTS, student_pattern=r"^dot(?P<student>[^-]+)-")
    assert list(got.submissions) == [("alice", FIRST)], got.submissions
    assert got.students == ["alice"], got.students
    reasons = {u.path: u.reason for u in got.unmatched}
    assert "refused" in reasons.get(f"dot.-{FIRST}.ipynb", ""), reasons
    assert sorted(p.name for p in dest.iterdir()) == ["alice"], "a student folder other than alice's was made"
    roster = touch(tmp_path / "roster.csv", "student_id\n..\nalice\n")
    got = collect(src, tmp_path / "run3" / "submitted", ASSIGNMENTS, roster=roster,
                  student_pattern=r"^dot(?P<student>[^-]+)-")
    assert got.students == ["alice"], got.students
    assert any("'..'" in u.reason and u.reason.startswith("refused") for u in got.unmatched), got.unmatched


def declared_zip(path, name: str, declared: int, content: bytes = b"{}"):
    """A zip with one stored entry whose headers declare `declared` bytes (its data is `content`): how an archive
    claims a size without anyone writing it."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"alice_{FIRST}.ipynb", b"{}")
        z.writestr(name, content)
    data = bytearray(path.read_bytes())
    encoded = name.encode()
    import struct
    # The local header's uncompressed size sits 22 bytes after its signature, the central header's 24.
    for signature, at in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            name_at = start + (30 if signature == b"PK\x03\x04" else 46)
            if data[name_at:name_at + len(encoded)] == encoded:
                data[start + at:start + at + 4] = struct.pack("<L", declared)
            start += 4
    path.write_bytes(bytes(data))
    return path


def test_a_single_huge_notebook_in_a_zip_is_refused_before_extraction(tmp_path):
    big = f"bob_{FIRST}.ipynb"
    archive = declared_zip(tmp_path / "export.zip", big, 3 * 2**30)  # 3 GiB declared: under the 4 GiB total
    with zipfile.ZipFile(archive) as z:
        assert z.getinfo(big).file_size == 3 * 2**30
    got = collect(archive, tmp_path / "run" / "submitted", ASSIGNMENTS)
    assert ("alice", FIRST) in got.submissions
    reasons = {u.path: u.reason for u in got.unmatched}
    assert big in reasons and "3.0 GiB" in reasons[big] and "max_notebook_mib" in reasons[big], reasons


def test_a_notebook_over_the_per_notebook_limit_is_refused_from_a_zip_and_from_a_folder(tmp_path):
    from autograde.course import load_config
    from autograde.intake.collect import Collect

    limit = Collect(config=load_config()).max_notebook_mib
    assert 0 < limit <= 100, f"the per-notebook limit ({limit} MiB) is not far below the 4 GiB total"
    # A genuine entry of zeros just over the limit (a few hundred KiB in the zip).
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"alice_{FIRST}.ipynb", b"{}")
        z.writestr(f"bob_{FIRST}.ipynb", bytes((limit + 1) * 2**20))
    got = collect(archive, tmp_path / "run" / "submitted", ASSIGNMENTS, settings=Collect(max_notebook_mib=limit))
    reasons = {u.path: u.reason for u in got.unmatched}
    assert ("bob", FIRST) not in got.submissions and "max_notebook_mib" in reasons.get(f"bob_{FIRST}.ipynb", ""), \
        reasons
    # In a folder, a sparse file of 3 GiB (nothing written): refused by its size, not copied.
    src = tmp_path / "class"
    touch(src / f"alice_{FIRST}.ipynb")
    with open(src / f"carol_{FIRST}.ipynb", "wb") as f:
        f.truncate(3 * 2**30)
    dest = tmp_path / "run2" / "submitted"
    got = collect(src, dest, ASSIGNMENTS)
    reasons = {u.path: u.reason for u in got.unmatched}
    assert ("carol", FIRST) not in got.submissions and "3.0 GiB" in reasons.get(f"carol_{FIRST}.ipynb", ""), reasons
    assert not (dest / "carol").exists()


def test_the_graders_own_output_inside_the_submissions_folder_is_no_student(tmp_path):
    # `grade class --out class/grades`: the output of the last run (marked as the grader's) is not read as a student.
    from autograde.intake.collect import OUTPUT_MARKER

    src = tmp_path / "class"
    touch(src / "alice" / f"{FIRST}.ipynb")
    touch(src / "bob" / f"{FIRST}.ipynb")
    touch(src / "grades" / OUTPUT_MARKER, "")
    touch(src / "grades" / "submitted" / OUTPUT_MARKER, "")
    touch(src / "grades" / "submitted" / "alice" / FIRST / f"{FIRST}.ipynb")
    got = collect(src, tmp_path / "run" / "submitted", ASSIGNMENTS)
    assert got.students == ["alice", "bob"], got.students
    assert not [u for u in got.unmatched if u.path.startswith("grades")], got.unmatched


# Issue 19, red team hole 3: one student must not replace another's notebook through the name of a file she uploads.

def collected(tmp_path, files: dict[str, str], **kwargs):
    src = tmp_path / "export"
    for name, text in files.items():
        touch(src / name, text)
    return collect(src, tmp_path / "run" / "submitted", ASSIGNMENTS, **kwargs)


def test_a_blackboard_upload_named_like_another_students_later_attempt_stays_the_uploaders(tmp_path):
    crafted = f"Weighted Sum_alice_attempt_2024-03-01-10-00-00_bob_attempt_2099-01-01-00-00-00_{FIRST}.ipynb"
    got = collected(tmp_path, {f"Weighted Sum_bob_attempt_2024-03-01-09-00-00_{FIRST}.ipynb": "bob's own",
                               crafted: "alice's garbage"})
    assert got.submissions[("bob", FIRST)].read_text() == "bob's own", "bob's notebook was replaced by alice's"
    assert got.submissions[("alice", FIRST)].read_text() == "alice's garbage"


def test_a_moodle_file_named_like_another_participants_entry_stays_the_uploaders(tmp_path):
    got = collected(tmp_path, {
        f"Alice Smith_111_assignsubmission_file_{FIRST}.ipynb": "alice's own",
        f"Alice Smith_111_assignsubmission_file_x_222_assignsubmission_file_{FIRST}.ipynb": "alice's garbage",
        f"Bob Jones_222_assignsubmission_file_{FIRST}.ipynb": "bob's own"})
    assert sorted(got.submissions) == [("Alice-Smith", FIRST), ("Bob-Jones", FIRST)], got.submissions
    assert got.submissions[("Bob-Jones", FIRST)].read_text() == "bob's own"
    assert got.lms_ids == {"Alice-Smith": "111", "Bob-Jones": "222"}, got.lms_ids


def test_two_student_ids_with_one_lms_user_id_are_both_refused_and_reported(tmp_path, caplog):
    # However it came about (a name the LMS wrote differently, a crafted name), one LMS user cannot be two students:
    # neither notebook is graded as that user's, both are listed with the reason, and the screen says so.
    with caplog.at_level("WARNING", logger="autograde"):
        got = collected(tmp_path, {f"smithalice_222_900001_{FIRST}.ipynb": "one",
                                   f"jonesbob_222_900002_{FIRST}.ipynb": "two",
                                   f"whitecarol_333_900003_{FIRST}.ipynb": "carol's"})
    assert list(got.submissions) == [("whitecarol", FIRST)], got.submissions
    assert "222" not in got.lms_ids.values(), got.lms_ids
    reasons = {u.path: u.reason for u in got.unmatched}
    for name in (f"smithalice_222_900001_{FIRST}.ipynb", f"jonesbob_222_900002_{FIRST}.ipynb"):
        assert "222" in reasons.get(name, "") and "jonesbob" in reasons[name] and "smithalice" in reasons[name], reasons
    assert "222" in caplog.text and "jonesbob" in caplog.text, caplog.text


def test_two_google_classroom_notebooks_under_one_display_name_are_not_merged(tmp_path, caplog):
    # Classroom's names carry no user id: two notebooks under one name may be two students called the same.
    with caplog.at_level("WARNING", logger="autograde"):
        got = collected(tmp_path, {f"Jane Doe - {FIRST}.ipynb": "one", f"Jane Doe - Copy of {FIRST}.ipynb": "two",
                                   f"John Roe - {FIRST}.ipynb": "john's"})
    assert list(got.submissions) == [("John-Roe", FIRST)], got.submissions
    reasons = {u.path: u.reason for u in got.unmatched}
    for name in (f"Jane Doe - {FIRST}.ipynb", f"Jane Doe - Copy of {FIRST}.ipynb"):
        assert "same name" in reasons.get(name, ""), reasons
    assert "Jane-Doe" in caplog.text, caplog.text
