"""Torch versions as the rules compare them: ``--min-torch`` is the oldest torch a project supports.

A rule's output must run on every torch from ``--min-torch`` on; ``Rule.min_torch`` says the oldest torch its
fix needs. Versions are tuples of ints (``"1.8"`` -> ``(1, 8)``); the installed torch is read from the
package metadata, so that no command imports torch to know it.
"""
from __future__ import annotations

import re
from importlib import metadata
from typing import Tuple

Version = Tuple[int, ...]
_VERSION = re.compile(r"^\s*(\d+)\.(\d+)(?:\.(\d+))?")


class VersionError(ValueError):
    pass


def parse(text: str) -> Version:
    """``"1.8"``, ``"2.4.1"``, ``"2.13.0+cpu"`` -> ``(1, 8)``, ``(2, 4, 1)``, ``(2, 13, 0)``."""
    match = _VERSION.match(str(text))
    if not match:
        raise VersionError(f"not a torch version: {text!r} (expected X.Y, e.g. 1.8)")
    return tuple(int(part) for part in match.groups() if part is not None)


def spell(version: Version) -> str:
    return ".".join(str(part) for part in version)


def installed_torch() -> Version:
    """The installed torch's version, or the newest series we know when torch is not installed."""
    try:
        return parse(metadata.version("torch"))[:2]
    except (metadata.PackageNotFoundError, VersionError):
        return (2, 13)


def supports(target: Version, needed: str) -> bool:
    """A project whose oldest torch is ``target`` can use an API that appeared in ``needed``."""
    return target >= parse(needed)
