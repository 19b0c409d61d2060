"""Content-hash cache of results, so that a run over files it has seen parses nothing.

A file's result depends only on its bytes, the tool's code and the options. The key is ``sha1(bytes)``,
plus what else tells two identical files apart (a notebook's suffix, the ``per-file-ignores`` codes its
path matches), in a table named by the tool's signature and the options: every source file of
``codemods/`` and ``migrate/``, subfolders included, by path, size and modification time (a stat each;
reading them would cost more than the rest of a cached run), the tool's and Python's versions, and every
option but the mode (``--select``, ``--min-torch``, ``--unsafe-fixes``, ...). Editing a rule, upgrading,
or another option starts a fresh table. (Command files, whose answer depends on the scripts they start,
are not cached.)

``check`` and ``rewrite`` share a table: a file with no fix to apply has the same findings in both. Stored
are every file found with nothing to change (its findings included) and the final text of every file
``rewrite`` wrote, with the findings of the pass that found it settled (``driver.PASSES``), so a second
``rewrite`` or ``check`` of the tree parses nothing. A ``check`` entry that lists fixes to apply is not
served to ``rewrite``. The cache lives in ``$TORCH_MIGRATE_CACHE_DIR`` or ``$XDG_CACHE_HOME/torch-migrate``
(``~/.cache/torch-migrate``); ``--no-cache`` bypasses it.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Dict, List, Optional

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


def tool_signature() -> str:
    """The tool's version, Python's, and every ``*.py`` under the ``codemods`` and ``migrate`` packages by
    relative path, size and modification time (nanoseconds): any edit, added or removed file changes it."""
    digest = hashlib.sha1(f"{migrate.__version__}\0{sys.version}\n".encode())
    for package in (codemods, migrate):
        root = os.path.dirname(os.path.abspath(package.__file__))
        digest.update(f"{root}\n".encode())
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
            for name in sorted(names):
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    info = os.stat(path)
                    digest.update(f"{os.path.relpath(path, root)}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _options_key(options) -> str:
    """Every option but the mode (``check``, ``rewrite`` and ``rewrite --diff`` share their answers)."""
    if dataclasses.is_dataclass(options) and hasattr(options, "mode"):
        options = dataclasses.replace(options, mode="")
    return repr(options)


def cache_key(raw: bytes, path: Path, options, context: bytes = b"") -> str:
    """The key of a file's result: its content hash, and what else makes the same bytes give another answer
    (``context``: what other files of the tree give it, ``codemods.repo.fingerprint``)."""
    key = hashlib.sha1(raw + context).hexdigest()
    if path.suffix != ".py":  # a notebook, or a command file (Makefile, *.sh): read another way
        key += f":{path.suffix or path.name}"
    ignored = options.ignored(path) if hasattr(options, "ignored") else ()
    return f"{key}:ignore={','.join(ignored)}" if ignored else key


FIELDS = tuple(field.name for field in dataclasses.fields(Finding))  # a finding is stored as a row of these
_TEXTS = tuple(FIELDS.index(name) for name in ("code", "message", "hint"))  # as indexes into the table's strings


class Cache:
    """``key -> findings`` for one configuration, loaded once and saved once.

    On disk: ``{"strings": [...], "entries": {key: [[field, ...], ...]}}``, each finding a row of ``FIELDS``
    with its code, message and hint as indexes into ``strings``: a tenth of the size of one dict per
    finding, and read in a fraction of the time.
    """

    def __init__(self, options, directory: Optional[Path] = None):
        table = hashlib.sha1(f"{tool_signature()}\n{_options_key(options)}".encode()).hexdigest()[:20]
        self.path = (directory or cache_dir()) / f"{table}.json"
        self.entries: Dict[str, list] = {}
        self.strings: List[str] = []
        self.dirty = False
        try:
            data = json.loads(self.path.read_text())
            self.entries, self.strings = dict(data["entries"]), list(data["strings"])
        except (OSError, ValueError, KeyError, TypeError):
            pass  # no cache yet, or a damaged one: start afresh
        self._index = {text: number for number, text in enumerate(self.strings)}

    def get(self, key: str) -> Optional[List[Finding]]:
        rows = self.entries.get(key)
        if not isinstance(rows, list):
            return None
        try:
            findings = []
            for row in rows:
                values = list(row)
                for field in _TEXTS:
                    values[field] = self.strings[values[field]]
                findings.append(Finding(*values))
            return findings
        except (TypeError, IndexError):  # an entry of another shape (a damaged file): computed again
            return None

    def _string(self, text: str) -> int:
        number = self._index.get(text)
        if number is None:
            number = self._index[text] = len(self.strings)
            self.strings.append(text)
        return number

    def put(self, key: str, findings) -> None:
        if not key or key in self.entries:
            return
        rows = []
        for finding in findings:
            row = [getattr(finding, name) for name in FIELDS]
            for field in _TEXTS:
                row[field] = self._string(row[field])
            rows.append(row)
        self.entries[key] = rows
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():
                self.path.write_bytes(b"{}")
            data = {"strings": self.strings, "entries": self.entries}
            atomic_write(self.path, json.dumps(data, separators=(",", ":")).encode())
        except OSError:
            pass  # a cache that cannot be written only costs speed
