"""Submissions as instructors get them (LMS exports, zips, rosters) are mapped to students and assignments."""
import csv
import os
import subprocess
import sys
import zipfile

import nbformat
import pytest

from autograde.collect import clean_stem, collect, match_assignment
from autograde.course import REPO, assignment_ids
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
def test_grading_an_lms_zip_end_to_end(tmp_path):
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(f"alice_77_Copy of {FIRST} (1).ipynb", nbformat.writes(completed_notebook(FIRST)))
        z.writestr("bob_readme.txt", "hello")
    roster = touch(tmp_path / "roster.csv", "student_id\nalice\nbob\n")
    out = tmp_path / "grades"
    proc = subprocess.run([sys.executable, "-m", "autograde", "grade", str(archive), "--out", str(out),
                           "--roster", str(roster), "--assignment", FIRST, "--quiet"],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with open(out / "grades.csv", newline="") as f:
        grades = {r["student_id"]: r for r in csv.DictReader(f)}
    assert float(grades["alice"]["score"]) == float(grades["alice"]["max_score"]) > 0
    assert float(grades["bob"]["score"]) == 0
    with open(out / "unmatched.csv", newline="") as f:
        assert [r["path"] for r in csv.DictReader(f)] == ["bob_readme.txt"]
    assert "1 file(s) not graded" in proc.stdout
