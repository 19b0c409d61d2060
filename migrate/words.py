"""Counted nouns for messages (``1 file``, ``2 files``): one spelling for the CLI, the report card and the
harness, which must not import each other."""
from __future__ import annotations

from typing import Optional


def plural(count: int, word: str, words: Optional[str] = None) -> str:
    """``1 file``, ``2 files``; ``words`` where adding an s is wrong (``fixes``)."""
    return f"{count} {word if count == 1 else words or word + 's'}"
