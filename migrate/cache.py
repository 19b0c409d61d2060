"""Content-hash cache of files that need no change, so re-runs are near-instant.

A file's result depends only on its bytes, the rules' code and the options, so
the key is ``sha1(bytes)`` inside a table named by a fingerprint of the tool's
own source files and the options: editing a rule, upgrading the tool or
changing ``--select`` starts a fresh table. Only results that leave the file
unchanged are stored (their findings included). The cache lives in
``$TORCH_MIGRATE_CACHE_DIR`` or ``$XDG_CACHE_HOME/torch-migrate``
(``~/.cache/torch-migrate``); ``--no-cache`` bypasses it.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Dict, Optional

import codemods
import migrate
from codemods.finding import Finding
from migrate.source import atomic_write


def cache_dir() -> Path:
    explicit = os.environ.get("TORCH_MIGRATE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "torch-migrate"


def _fingerprint(options) -> str:
    digest = hashlib.sha1(migrate.__version__.encode())
    for package in (codemods, migrate):  # with their subpackages (rule families, the semantic model)
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode() + path.read_bytes())
    digest.update(repr(options).encode())
    return digest.hexdigest()[:20]


class Cache:
    """``digest -> findings`` for one configuration, loaded once and saved once."""

    def __init__(self, options, directory: Optional[Path] = None):
        self.path = (directory or cache_dir()) / f"{_fingerprint(options)}.json"
        self.entries: Dict[str, list] = {}
        self.dirty = False
        try:
            self.entries = json.loads(self.path.read_text())
        except (OSError, ValueError):
            pass  # no cache yet, or a damaged one: start afresh

    def get(self, digest: str):
        findings = self.entries.get(digest)
        return None if findings is None else [Finding(**f) for f in findings]

    def put(self, digest: str, findings) -> None:
        if digest and self.entries.get(digest) is None:
            self.entries[digest] = [f.to_dict() for f in findings]
            self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():
                self.path.write_bytes(b"{}")
            atomic_write(self.path, json.dumps(self.entries).encode())
        except OSError:
            pass  # a cache that cannot be written only costs speed
