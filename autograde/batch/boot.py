"""A spawned worker process's first call: :func:`autograde.startup.skip_unused_imports`, then the worker's start.

The pool's initializer is found by name in the new process, which imports its
module first; this module imports nothing heavy, so the skip comes before
:mod:`.worker` imports nbformat.
"""
from __future__ import annotations

from ..startup import skip_unused_imports


def start_pool_worker(*args) -> None:
    """:func:`autograde.batch.worker.start_pool_worker` (same arguments), after leaving out unused imports."""
    skip_unused_imports()
    from .worker import start_pool_worker as start

    start(*args)
