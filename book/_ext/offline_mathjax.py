"""Serve MathJax from the built book itself, so the maths is typeset with no network (a train, an exam room).

MathJax comes from a pinned PyPI package (``django-static-mathjax``, MathJax
3.2.2, no dependencies), not from a CDN. Its ``es5`` folder is copied once into
``_build/mathjax-static/mathjax`` and served as ``_static/mathjax``;
``_config.yml`` points ``mathjax_path`` at it.
"""
import shutil
from importlib.resources import files
from pathlib import Path


def _add_mathjax(app):
    """Put a copy of MathJax's es5 folder on html_static_path (once per build folder)."""
    source = Path(str(files("mathjax"))) / "static" / "mathjax" / "es5"
    if not (source / "tex-mml-chtml.js").is_file():
        raise RuntimeError(f"MathJax is missing from {source}: install the pinned django-static-mathjax package")
    static = Path(app.outdir).parent / "mathjax-static"
    if not (static / "mathjax" / "tex-mml-chtml.js").is_file():
        shutil.rmtree(static, ignore_errors=True)
        shutil.copytree(source, static / "mathjax")
    app.config.html_static_path.append(str(static))


def setup(app):
    """Sphinx entry point."""
    app.connect("builder-inited", _add_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
