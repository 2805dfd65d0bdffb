"""The book's execution cache is emptied when the code its pages run beside their own cells changes.

A page runs the reference solutions through autograde.reference; jupyter-cache keys the page by its own cells
only, so without this a changed solution (or a broken reference.py, as once happened) would be served from the
cache: outputs of old code, and a build that passes locally and fails on a fresh machine.
"""
import shutil
from types import SimpleNamespace

import pytest

from autograde import reference
from autograde.course import SOLUTIONS
from book._ext import page_dependencies

ASSIGNMENT = "01-weighted-sum"


@pytest.fixture
def solutions(tmp_path, monkeypatch):
    """A copy of one assignment's source, which reference (and so the digest) reads instead of the course's."""
    folder = tmp_path / "solutions"
    shutil.copytree(SOLUTIONS / ASSIGNMENT, folder / ASSIGNMENT)
    monkeypatch.setattr(reference, "SOLUTIONS", folder)
    return folder / ASSIGNMENT / f"{ASSIGNMENT}.py"


def edited(source, old: str, new: str) -> None:
    text = source.read_text()
    assert text.count(old) == 1, f"the edit's anchor {old!r} is not once in the source"
    source.write_text(text.replace(old, new))


def test_the_digest_changes_with_an_answer_cell(solutions):
    before = page_dependencies.code_digest()
    edited(solutions, "def dot_scores(queries, keys):", "def dot_scores(queries, keys):  # edited")
    assert page_dependencies.code_digest() != before


def test_the_digest_ignores_test_cells_which_no_page_runs(solutions):
    before = page_dependencies.code_digest()
    edited(solutions, "# Visible test: shape and one worked example.\nqueries = np.array([[1.0, 0.0], [1.0, 2.0]])",
           "# Visible test: shape and one worked example.\nqueries = np.array([[1.0, 0.0], [1.0, 2.5]])")
    assert page_dependencies.code_digest() == before


def build(tmp_path):
    """What the extension reads of Sphinx's application: the output folder, below _build."""
    return SimpleNamespace(config=SimpleNamespace(nb_execution_cache_path=""), srcdir=str(tmp_path),
                           outdir=str(tmp_path / "_build" / "html"))


def cache_with_stamp(tmp_path, stamp: str | None):
    folder = tmp_path / "_build" / ".jupyter_cache"
    folder.mkdir(parents=True)
    (folder / "global.db").write_text("a cached page")
    if stamp is not None:
        (folder / page_dependencies.STAMP).write_text(stamp + "\n")
    return folder


@pytest.mark.parametrize("stamp", ["0" * 64, None], ids=["other code", "no stamp"])
def test_a_cache_filled_by_other_code_is_emptied_and_stamped(tmp_path, solutions, stamp):
    folder = cache_with_stamp(tmp_path, stamp)
    assert page_dependencies.refresh_cache(build(tmp_path))
    assert not (folder / "global.db").exists()
    assert (folder / page_dependencies.STAMP).read_text().strip() == page_dependencies.code_digest()


def test_a_cache_filled_by_todays_code_is_kept(tmp_path, solutions):
    folder = cache_with_stamp(tmp_path, page_dependencies.code_digest())
    assert not page_dependencies.refresh_cache(build(tmp_path))
    assert (folder / "global.db").read_text() == "a cached page"


def test_an_edited_solution_empties_the_cache_of_the_next_build(tmp_path, solutions):
    folder = cache_with_stamp(tmp_path, page_dependencies.code_digest())
    edited(solutions, "def dot_scores(queries, keys):", "def dot_scores(queries, keys):  # edited")
    assert page_dependencies.refresh_cache(build(tmp_path))
    assert not (folder / "global.db").exists()


def test_the_build_loads_the_extension():
    config = (SOLUTIONS.parent / "_config.yml").read_text()
    assert "page_dependencies: book/_ext" in config and "      - page_dependencies\n" in config


def test_a_folder_that_is_no_cache_is_never_removed(tmp_path, solutions):
    # (execute.cache pointed by mistake at the book's pages: nothing of them may go)
    pages = tmp_path / "book"
    pages.mkdir()
    (pages / "01-weighted-sum.md").write_text("a page")
    app = build(tmp_path)
    app.config.nb_execution_cache_path = str(pages)
    assert not page_dependencies.refresh_cache(app)
    assert (pages / "01-weighted-sum.md").read_text() == "a page"


def test_an_emptied_cache_makes_sphinx_read_every_page_again(tmp_path, solutions):
    # Sphinx reads again only the pages whose own source changed: an emptied cache must mark them all outdated, or
    # no page would execute and the HTML would keep the old outputs.
    env = SimpleNamespace(found_docs={"intro", "book/01-weighted-sum", "book/02-additive-attention"})
    app = build(tmp_path)
    cache_with_stamp(tmp_path, "0" * 64)
    assert page_dependencies.refresh_cache(app)
    assert page_dependencies.every_page_if_emptied(app, env, set(), set(), set()) == sorted(env.found_docs)
    assert not page_dependencies.refresh_cache(app)  # the next build, nothing changed
    assert page_dependencies.every_page_if_emptied(app, env, set(), set(), set()) == []


def test_the_extension_asks_for_every_page_when_it_empties_the_cache():
    connected = []
    page_dependencies.setup(SimpleNamespace(connect=lambda event, *handler, **options: connected.append(event)))
    assert connected == ["config-inited", "env-get-outdated"]
