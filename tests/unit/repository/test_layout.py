"""Rules of the code's layout that no test would otherwise notice breaking.

Test scaffolding lives in tests/support/ (never in the grader's package), test
modules import only from there, and nothing edits sys.path: `autograde` is
installed (editable), and benchmarks run as ``python -m benchmarks.<name>``.
"""
import ast
import re
import subprocess

from autograde.course import REPO

TESTS = REPO / "tests"
TEST_MODULES = sorted(p for folder in ("unit", "e2e", "course") for p in (TESTS / folder).rglob("test_*.py"))
# Removed by issue 14's restructuring of the package (branch issue-14), which moves the runtime data out of it.
SYS_PATH_PENDING: set[str] = set()  # none left


def tracked(*patterns: str) -> list[str]:
    """Files git tracks under the repository, matching `patterns`."""
    out = subprocess.run(["git", "ls-files", "--", *patterns], cwd=REPO, capture_output=True, text=True, check=True)
    return out.stdout.split()


def imported_modules(path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_test_modules_import_no_conftest_nor_each_other():
    modules = [TESTS / "conftest.py", *TEST_MODULES] + sorted((TESTS / "support").glob("*.py"))
    own = {p.stem for p in TEST_MODULES} | {"conftest", "commands"}
    assert len(modules) > 10
    wrong = {str(p.relative_to(REPO)): sorted(m for m in imported_modules(p) if m.split(".")[0] in own)
             for p in modules}
    assert not {p: m for p, m in wrong.items() if m}, "import shared helpers from tests.support instead"


def test_test_scaffolding_is_not_in_the_package():
    assert not (REPO / "autograde" / "synthetic.py").exists()
    users = {p: imported_modules(REPO / p) for p in tracked("*.py")}
    assert not [p for p, mods in users.items() if "autograde.synthetic" in mods]
    assert not [p for p in tracked("autograde/*.py") if "tests" in {m.split(".")[0] for m in users[p]}], (
        "the grader imports test code")


def test_nothing_edits_sys_path():
    edits = re.compile(r"sys\.path\.(insert|append|extend)|sys\.path\s*[+]?=")
    files = [p for p in tracked("*.py", "*.md", "*.ipynb") if p not in SYS_PATH_PENDING]
    assert len(files) > 30
    found = [p for p in files if edits.search((REPO / p).read_text())]
    assert not found, f"sys.path edited in {found}"


def notation_table(path):
    """The rows of the notation table under the '## Notation' heading of a Markdown file."""
    text = path.read_text(encoding="utf-8")
    assert "## Notation" in text, f"{path.name} has no '## Notation' section"
    section = text.split("## Notation", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("|")]


def test_the_book_and_the_design_show_one_notation_table():
    book, design = notation_table(REPO / "intro.md"), notation_table(REPO / "DESIGN.md")
    assert len(book) > 10, "the book's first page has no notation table"
    missing = [row for row in design if row not in book] + [row for row in book if row not in design]
    assert not missing, "intro.md and DESIGN.md disagree on these notation rows:\n" + "\n".join(missing)


def test_the_book_never_reads_a_git_ignored_folder_of_runtime_data():
    # The repository's root is the book's root: Jupyter Book executes every notebook it finds, so a grading run's
    # executed notebooks (the tests' .grading-cache/, nbgrader's course/, an instructor's grades/) would become
    # failing pages of the book. Each folder .gitignore anchors at the root must be excluded from the build.
    import yaml

    ignored = [line.strip().strip("/") for line in (REPO / ".gitignore").read_text().splitlines()
               if line.strip().startswith("/") and line.strip().endswith("/")]
    assert ".grading-cache" in ignored, "the check reads nothing: .gitignore no longer anchors the tests' cache"
    excluded = set(yaml.safe_load((REPO / "_config.yml").read_text())["exclude_patterns"])
    missing = [f"{folder}/*" for folder in ignored if f"{folder}/*" not in excluded]
    assert not missing, f"add {missing} to exclude_patterns in _config.yml: the book would execute what they hold"


def test_test_modules_live_under_unit_e2e_or_course_each_file_name_once():
    assert not sorted(TESTS.glob("test_*.py")), "a test module goes in tests/unit/<area>/, tests/e2e/ or tests/course/"
    names = [p.name for p in TEST_MODULES]
    assert len(names) > 30, "the check reads nothing"
    assert len(names) == len(set(names)), f"test modules of one name: {sorted({n for n in names if names.count(n) > 1})}"
