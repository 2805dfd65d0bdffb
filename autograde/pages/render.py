"""The HTML pages' templates (``autograde/pages/templates/*.html.j2``), rendered with Jinja2, escaping on."""
from __future__ import annotations

import functools

import jinja2


def _count_of(n: int, noun: str) -> str:
    """'1 notebook', '3 notebooks'."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


@functools.cache
def environment() -> jinja2.Environment:
    """The templates' environment: every value escaped, undefined names an error, filters ``points`` and ``count_of``."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("autograde.pages", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.filters["points"] = lambda x: f"{x:g}"
    env.filters["count_of"] = _count_of
    return env


def render(template: str, **context) -> str:
    """The page `template` (a file name in autograde/pages/templates) rendered with `context`."""
    return environment().get_template(template).render(**context)
