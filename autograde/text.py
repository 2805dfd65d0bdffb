"""Text helpers every step of grading shares (a message's first line)."""
from __future__ import annotations


def first_line(text) -> str:
    """The first non-empty line of `text` (any object, as str), stripped, at most 300 characters."""
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""
