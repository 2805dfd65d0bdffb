"""What the suite needs from the machine (issue 21): `make test` installs bubblewrap and Chromium where it can and
otherwise stops at once with the command to run; run by hand without bubblewrap, pytest skips the `sandbox` tests
with that reason, except on CI, where it is an error."""
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from autograde.course import REPO

pytest_plugins = ["pytester"]

SCRIPT = REPO / "scripts" / "system-packages"
# Where the script is to find commands: a folder of its own, readable by the unprivileged user it may run as.
FAKE = "#!/bin/bash\n"
CHMOD = shutil.which("chmod")  # (for the stand-in apt-get, whose PATH has no chmod)


@pytest.fixture
def path():
    """An empty folder that is the whole PATH of the script under test, but for bash (which its first line asks
    for) and a copy of the script itself."""
    folder = Path(tempfile.mkdtemp(prefix="system-packages-"))
    folder.chmod(0o755)
    (folder / "bash").symlink_to(shutil.which("bash"))
    shutil.copy(SCRIPT, folder / "system-packages")
    yield folder
    shutil.rmtree(folder)


def add(folder: Path, name: str, body: str = "exit 0\n") -> None:
    """A command `name` in `folder` that runs the bash `body`."""
    (folder / name).write_text(FAKE + body)
    (folder / name).chmod(0o755)


def apt_get(folder: Path, fails: str = "") -> None:
    """A stand-in for apt-get that logs its arguments and "installs" bwrap or chromium as fakes in `folder`.
    `fails`: "always", or "until-updated" (as on a fresh machine whose package lists are missing)."""
    add(folder, "apt-get", f"""echo "$*" >> {folder}/apt-get.log
if [ "{fails}" = always ] || {{ [ "{fails}" = until-updated ] && ! [ -e {folder}/updated ]; }}; then
  [ "$1" = update ] && : > {folder}/updated && exit 0
  echo "E: Unable to locate package $4" >&2; exit 100
fi
for package in "$@"; do
  case $package in
    bubblewrap) printf '#!/bin/bash\\n' > {folder}/bwrap; {CHMOD} 755 {folder}/bwrap ;;
    chromium) printf '#!/bin/bash\\n' > {folder}/chromium; {CHMOD} 755 {folder}/chromium ;;
  esac
done
""")


def run(folder: Path, unprivileged: bool = False, command: list[str] | None = None) -> subprocess.CompletedProcess:
    """The script (or `command`) with `folder` as its whole PATH; `unprivileged`: as nobody when this is root."""
    prefix = []
    if unprivileged and os.geteuid() == 0:
        prefix = [shutil.which("setpriv"), "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    return subprocess.run(prefix + (command or [str(folder / "system-packages")]), env={"PATH": str(folder)},
                          capture_output=True, text=True, timeout=60)


def test_with_both_installed_the_script_does_nothing(path):
    add(path, "bwrap")
    add(path, "chromium")
    apt_get(path)
    proc = run(path)
    assert (proc.returncode, proc.stderr) == (0, ""), proc
    assert not (path / "apt-get.log").exists(), "apt-get was called with both installed"


@pytest.mark.parametrize("fails", ["", "until-updated"])
def test_what_is_missing_is_installed_where_that_needs_no_password(path, fails):
    apt_get(path, fails)
    if os.geteuid() != 0:  # (not root: through sudo, which here asks for no password)
        add(path, "sudo", '[ "$1" = -n ] && shift\nexec "$@"\n')
    proc = run(path)
    assert proc.returncode == 0, proc.stderr
    calls = (path / "apt-get.log").read_text().splitlines()
    expected = ["install -y -q bubblewrap chromium"]
    if fails:
        expected = [expected[0], "update -q", expected[0]]
    assert calls == expected, calls
    assert (path / "bwrap").exists() and (path / "chromium").exists()


@pytest.mark.parametrize("setting", ["no apt-get", "not root, no sudo", "sudo asks for a password"])
def test_without_a_way_to_install_it_stops_with_the_command(path, setting):
    if setting != "no apt-get":
        apt_get(path)
    if setting == "sudo asks for a password":
        add(path, "sudo", 'echo "sudo: a password is required" >&2\nexit 1\n')
    proc = run(path, unprivileged=setting != "no apt-get")
    assert proc.returncode == 1, proc
    assert "\n    sudo apt-get install bubblewrap chromium\n" in proc.stderr, proc.stderr
    assert not (path / "apt-get.log").exists(), "apt-get was run without the rights to install"
    why = {"no apt-get": "no apt-get here", "not root, no sudo": "only root can install them",
           "sudo asks for a password": "only root can install them"}[setting]
    assert why in proc.stderr, proc.stderr


def test_only_what_is_missing_is_named(path):
    add(path, "bwrap")
    proc = run(path)
    assert proc.returncode == 1 and "\n    sudo apt-get install chromium\n" in proc.stderr, proc.stderr


def test_a_failed_install_says_why_and_what_to_run(path):
    apt_get(path, "always")
    proc = run(path)
    assert proc.returncode == 1, proc
    assert "Unable to locate package" in proc.stderr and "apt-get did not install them" in proc.stderr, proc.stderr
    assert "\n    sudo apt-get install bubblewrap chromium\n" in proc.stderr, proc.stderr


def test_make_test_stops_before_the_venv_and_any_test(path, tmp_path):
    # No apt-get on PATH: the script stops. Had make gone on, it would build a venv with `false` (an error at once,
    # and nothing installed) and run ruff and pytest: none of that may be printed.
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    proc = run(path, command=[shutil.which("make"), "-C", str(REPO), "test", "PYTHON=false", f"VENV={tmp_path}/venv"])
    assert proc.returncode != 0, proc
    assert "\n    sudo apt-get install bubblewrap chromium\n" in proc.stderr, proc.stderr
    for later in ("venv", "ruff", "pytest"):
        assert later not in proc.stdout + proc.stderr.replace("make test", ""), f"make went on to {later}:\n{proc}"


# The `sandbox` marker without bubblewrap: a pytest run of a test that needs it and one that does not, in this
# process, with the suite's conftest.py.
MARKED = """
import pytest

@pytest.mark.sandbox
def test_needs_bubblewrap():
    assert False, "ran without bubblewrap"

def test_needs_nothing():
    pass
"""


def run_marked(pytester, monkeypatch, bwrap: bool, ci: str | None, *args: str):
    pytester.makeconftest((REPO / "tests" / "conftest.py").read_text())
    pytester.makeini("[pytest]\nmarkers =\n    sandbox: needs bubblewrap\n    slow: slow\n")
    pytester.makepyfile(test_marked=MARKED)
    folder = pytester.mkdir("bin")
    if bwrap:
        add(folder, "bwrap", 'exit 0\n')
    monkeypatch.setenv("PATH", str(folder))
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    # (As pyproject.toml's addopts: hypothesis' plugin would import all of hypothesis again in each run, ~2 s.)
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-rs", *args)


@pytest.mark.parametrize("ci", [None, "", "false"])
def test_without_bubblewrap_the_sandbox_tests_are_skipped_saying_how_to_install_it(pytester, monkeypatch, ci):
    result = run_marked(pytester, monkeypatch, False, ci)
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*bubblewrap (bwrap) is not installed: `sudo apt-get install bubblewrap`*"])


@pytest.mark.parametrize("ci", ["1", "true"])
def test_on_ci_a_missing_bubblewrap_is_an_error_not_a_skip(pytester, monkeypatch, ci):
    result = run_marked(pytester, monkeypatch, False, ci)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    result.stderr.fnmatch_lines(["*bubblewrap (bwrap) is not on PATH*1 selected test(s) marked `sandbox`*"])
    result.assert_outcomes()  # (nothing ran)


@pytest.mark.parametrize("ci", [None, "1"])
def test_with_bubblewrap_the_sandbox_tests_run(pytester, monkeypatch, ci):
    result = run_marked(pytester, monkeypatch, True, ci)
    result.assert_outcomes(passed=1, failed=1)  # (the sandbox test ran: it fails on purpose)


def test_on_ci_deselected_sandbox_tests_need_no_bubblewrap(pytester, monkeypatch):
    result = run_marked(pytester, monkeypatch, False, "1", "-m", "not sandbox")
    result.assert_outcomes(passed=1, deselected=1)
