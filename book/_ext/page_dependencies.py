"""Execute the book's pages again when the code they run, outside their own cells, has changed.

jupyter-cache (the build's ``execute_notebooks: cache``) keys a page by its own code cells. The pages also run the
reference solutions through :mod:`autograde.reference` (the answer and given cells of ``solutions/<a>/<a>.py``):
an edit there changes what a page computes, prints and glues, yet the cache would serve the outputs of the old
code. So the build keeps a digest of that code beside the cache, and empties the cache when the digest differs
(a fresh build, as CI's, has no cache and is unaffected). Test cells are not in the digest: no page runs them.
"""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from sphinx.util import logging

from autograde import cells, reference

STAMP = "pages-run-code.sha256"
_LOG = logging.getLogger(__name__)


def code_digest() -> str:
    """SHA-256 of the code the pages run beside their own: autograde/reference.py, autograde/cells.py (which
    decides what load_reference runs), book/course.mplstyle (every figure's style), and every assignment's answer
    and given cells."""
    digest = hashlib.sha256()
    for module in (reference, cells):
        digest.update(Path(module.__file__).read_bytes())
    digest.update(Path(__file__).resolve().parent.parent.joinpath("course.mplstyle").read_bytes())
    for source in sorted(reference.SOLUTIONS.glob("*/*.py")):
        if source.stem == source.parent.name:
            for grade_id, code in reference.reference_cells(source.stem):
                digest.update(f"\0{source.stem}\0{grade_id}\0{code}".encode())
    return digest.hexdigest()


def cache_folder(app) -> Path:
    """The build's jupyter-cache folder, where myst-nb looks for it: ``_config.yml``'s ``execute.cache`` (relative
    to the working folder, as jupyter-cache takes it), else Jupyter Book's ``_build/.jupyter_cache``."""
    configured = getattr(app.config, "nb_execution_cache_path", "")
    return Path(configured).absolute() if configured else Path(app.outdir).parent / ".jupyter_cache"


def refresh_cache(app, config=None) -> bool:
    """Empty the execution cache if the code the pages run has changed since it was filled; stamp it with the
    digest of today's code. Returns whether it was emptied. A folder that is not a jupyter-cache (no
    ``global.db``) and not empty is never touched: a wrong ``execute.cache`` must not cost the folder it names."""
    folder, digest = cache_folder(app), code_digest()
    stamp = folder / STAMP
    app.pages_run_other_code = False
    if folder.is_dir() and not (folder / "global.db").is_file() and any(p.name != STAMP for p in folder.iterdir()):
        _LOG.info("%s is not a jupyter-cache: left as it is", folder)
        return False
    if folder.exists() and (not stamp.is_file() or stamp.read_text().strip() != digest):
        _LOG.info("the reference solutions or autograde/reference.py changed since the pages were executed: "
                  "emptying %s, so that every page is executed again", folder)
        shutil.rmtree(folder)
        app.pages_run_other_code = True
    folder.mkdir(parents=True, exist_ok=True)
    stamp.write_text(digest + "\n")
    return app.pages_run_other_code


def every_page_if_emptied(app, env, added, changed, removed) -> list[str]:
    """Sphinx's `env-get-outdated`: every page, when the cache was emptied. Sphinx reads again only the pages whose
    own source changed, so without this an emptied cache would execute nothing and the HTML keep old outputs."""
    return sorted(env.found_docs) if getattr(app, "pages_run_other_code", False) else []


def setup(app):
    """Sphinx entry point: before myst-nb opens the cache (it does so per page, when the page is read)."""
    app.connect("config-inited", refresh_cache, priority=100)
    app.connect("env-get-outdated", every_page_if_emptied)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
