"""Torch versions as the rules compare them: ``--min-torch`` is the oldest torch a project supports.

A rule's output must run on every torch from ``--min-torch`` on; ``Rule.min_torch`` says the oldest torch its
fix needs. Versions are tuples of ints (``"1.8"`` -> ``(1, 8)``); the installed torch is read from the
package metadata, so that no command imports torch to know it.
"""
from __future__ import annotations

import os
import re
import sys
from typing import Optional, Tuple

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
    text = _wheel_torch_version()
    if text is None:  # not a wheel's dist-info first: ask importlib.metadata, which reads every layout
        from importlib import metadata

        try:
            text = metadata.version("torch")
        except metadata.PackageNotFoundError:
            return (2, 13)
    try:
        return parse(text)[:2]
    except VersionError:
        return (2, 13)


def _wheel_torch_version() -> Optional[str]:
    """The version in the name of the first ``torch-X.Y.Z.dist-info`` on ``sys.path``, where
    ``importlib.metadata`` looks first; None where the first torch there is another layout, or none is.

    Every run (a fully cached one too) needs the version for its cache key, and importing
    ``importlib.metadata`` (its ``email`` parsing) costs a tenth of a cached run.
    """
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # a zip file, a folder that is gone
            continue
        for name in names:
            lowered = name.lower()
            if lowered.endswith((".dist-info", ".egg-info")) and lowered.split("-")[0].split(".")[0] == "torch":
                if not lowered.endswith(".dist-info"):
                    return None
                return name[:-len(".dist-info")].partition("-")[2] or None
    return None


def supports(target: Version, needed: str) -> bool:
    """A project whose oldest torch is ``target`` can use an API that appeared in ``needed``."""
    return target >= parse(needed)
