"""Reading and writing source files so that nothing is lost.

A file is decoded the way Python itself would (BOM, PEP 263 cookie), line
endings are never translated, and it is written back in the same encoding,
with the same BOM and permissions, through a temporary file in the same
directory and an atomic rename: a reader (or an interrupted run) sees either
the old file or the new one, never a mix.
"""
from __future__ import annotations

import codecs
import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path


class SourceError(Exception):
    """A file that cannot be processed; ``str()`` is ``path:line:col: message``."""

    def __init__(self, path, message: str, line: int = 1, col: int = 1):
        super().__init__(f"{path}:{line}:{col}: {message}")
        self.path, self.message, self.line, self.col = str(path), message, line, col


@dataclass(frozen=True)
class Source:
    path: Path
    raw: bytes
    encoding: str  # a codec name; "utf-8-sig" when the file starts with a BOM
    text: str  # decoded, BOM stripped, line endings untouched

    def encode(self, text: str) -> bytes:
        return text.encode(self.encoding)


def decode(path: Path, raw: bytes) -> Source:
    if b"\0" in raw:
        line = raw[: raw.index(b"\0")].count(b"\n") + 1
        raise SourceError(path, "file contains null bytes (binary file?)", line)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as error:
        raise SourceError(path, f"bad encoding declaration: {error.msg}", error.lineno or 1) from None
    try:
        codecs.lookup(encoding)
        text = raw.decode(encoding)
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        col = error.start - (raw.rfind(b"\n", 0, error.start) + 1) + 1
        raise SourceError(path, f"cannot decode as {encoding}: {error.reason}", line, col) from None
    return Source(path, raw, encoding, text)


def read_source(path: Path) -> Source:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise SourceError(path, f"cannot read: {error.strerror or error}") from None
    return decode(path, raw)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one rename, keeping its permission bits.

    The temporary file lives in the same directory (same file system, so the
    rename is atomic) and is fsynced before the rename; on any failure it is
    removed and the original stays as it was.
    """
    info = os.stat(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
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
