"""Reading and writing source files so that nothing is lost.

A file is decoded the way Python itself would (BOM, PEP 263 cookie), line
endings are never translated, and it is written back in the same encoding,
with the same BOM and permissions, through a temporary file in the same
directory and an atomic rename: a reader (or an interrupted run) sees either
the old file or the new one, never a mix. SIGINT and SIGTERM are held back
while a temporary file exists, so only SIGKILL (or a crash) can leave one
behind; its name carries the writer's pid, and ``remove_stale_temps`` deletes
those whose writer is gone (discovery never lists them: they end in ``.tmp``).
A Jupyter notebook is read and written back by ``migrate.notebook``, whose
``NotebookSource`` answers the ``Source`` methods with cell positions.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional


class SourceError(Exception):
    """A file that cannot be processed; ``str()`` is ``path:line:col: message``."""

    def __init__(self, path, message: str, line: int = 1, col: int = 1):
        super().__init__(f"{path}:{line}:{col}: {message}")
        self.path, self.message, self.line, self.col = str(path), message, line, col


class Unwritable(Exception):
    """The rewritten text cannot become the file's new content: ``line`` (1-based, in the new text) and why."""

    def __init__(self, line: int, message: str, internal: bool = False):
        super().__init__(message)
        self.line, self.message, self.internal = line, message, internal


@dataclass(frozen=True)
class Source:
    """A file as the rules see it. A notebook (``migrate.notebook.NotebookSource``) shows its code cells
    as ``text`` and answers the methods below with cell positions."""

    path: Path
    raw: bytes
    encoding: str  # a codec name; "utf-8-sig" when the file starts with a BOM
    text: str  # decoded, BOM stripped, line endings untouched

    def encode(self, text: str) -> bytes:
        """The file's new bytes for the rewritten ``text``."""
        return text.encode(self.encoding)

    def where(self, line: int, col: int, text: Optional[str] = None) -> str:
        """A position in ``text`` (the rewritten text if given), as messages show it."""
        return f"{line}:{col}"

    def localize(self, findings: list) -> list:
        """Findings with positions as the user sees the file."""
        return findings

    def localize_changes(self, changes: List[dict], text: str, findings: list) -> List[dict]:
        """Change-map entries (lines in the rewritten ``text``, one per applied finding) with positions as the
        user sees the file."""
        return changes


def compiles(text: str) -> bool:
    """Whether ``text`` compiles as a module on this Python."""
    try:
        compile(text, "<text>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def byte_position(raw: bytes, offset: int):
    """(line, column), from 1, of byte ``offset``."""
    return raw.count(b"\n", 0, offset) + 1, offset - (raw.rfind(b"\n", 0, offset) + 1) + 1


def decode(path: Path, raw: bytes) -> Source:
    if b"\0" in raw:
        raise SourceError(path, "file contains null bytes (binary file?)", *byte_position(raw, raw.index(b"\0")))
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as error:
        if not error.msg.startswith("invalid or missing encoding declaration"):
            raise SourceError(path, f"bad encoding declaration: {error.msg}", error.lineno or 1) from None
        encoding = "utf-8"  # no declaration and the first lines are not UTF-8: decoding says where
    try:
        text = raw.decode(encoding)
    except LookupError:  # a cookie naming a codec that is not a text encoding (rot13)
        raise SourceError(path, f"bad encoding declaration: {encoding} is not a text encoding") from None
    except UnicodeDecodeError as error:
        raise SourceError(path, f"cannot decode as {encoding}: {error.reason}",
                          *byte_position(raw, error.start)) from None
    return Source(path, raw, encoding, text)


def read_source(path: Path) -> Source:
    """Read and decode ``path``; a FIFO or device is refused before it is opened (reading one could block).

    A ``.ipynb`` is read as a notebook; a Python file that is in fact a notebook's JSON is refused (as
    Python, a notebook is one big dict literal that no rule would ever match).
    """
    notebook = path.suffix == ".ipynb"
    if notebook:
        from migrate.notebook import check_size, read_notebook
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise SourceError(path, "not a regular file")
        if notebook:
            check_size(path, info.st_size)  # an enormous one (outputs) is refused before it is read
        raw = path.read_bytes()
    except OSError as error:
        raise SourceError(path, f"cannot read: {error.strerror or error}") from None
    if notebook:
        return read_notebook(path, raw)
    source = decode(path, raw)
    if source.text.lstrip().startswith("{") and _is_notebook_json(source.text):
        raise SourceError(path, f"a Jupyter notebook (JSON), not Python: rename it to {path.stem}.ipynb")
    return source


def _is_notebook_json(text: str) -> bool:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and "nbformat" in data and "cells" in data


TEMP_MARK = "torch-migrate"
_STALE = re.compile(rf"\..+\.{TEMP_MARK}-(\d+)-\w+\.tmp")
_DEFERRED = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def _signals_deferred():
    """Hold SIGINT/SIGTERM until the block is done (they are delivered right after it)."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one rename, keeping its permission bits.

    The temporary file lives in the same directory (same file system, so the
    rename is atomic) and is fsynced before the rename; on any failure it is
    removed and the original stays as it was. SIGINT/SIGTERM wait until the
    rename (or the clean-up) is done.
    """
    info = os.stat(path)
    with _signals_deferred():
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{TEMP_MARK}-{os.getpid()}-",
                                   suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, stat.S_IMODE(info.st_mode))
            if (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
                try:
                    os.chown(tmp, info.st_uid, info.st_gid)
                except PermissionError:
                    pass  # only root can give a file away; the content is still right
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process
    return True


def remove_stale_temps(directory: Path) -> None:
    """Delete the temporary files in ``directory`` that a killed ``atomic_write`` left behind."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        match = _STALE.fullmatch(entry.name)
        if match and not _alive(int(match.group(1))):
            try:
                os.unlink(entry.path)
            except OSError:
                pass  # gone already, or not ours to delete
