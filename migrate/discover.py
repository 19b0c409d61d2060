"""Which files a command works on.

Directories are walked for ``*.py``; ``.git``, caches, virtual environments
and anything a ``.gitignore`` (at any depth) or ``--exclude`` names are
skipped. Files named on the command line are always taken. Symlinks are never
followed out of the root they were found under, and a file reached twice
(through a link) is listed once, under its first path.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, List, Sequence, Tuple

import pathspec

SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox",
             ".nox", ".eggs", "node_modules", "site-packages", ".torch-migrate-cache"}


def _is_virtualenv(directory: Path) -> bool:
    return (directory / "pyvenv.cfg").exists() or (directory / "conda-meta").is_dir()


def _gitignore(directory: Path):
    try:
        lines = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(path: Path, is_dir: bool, specs: Sequence[Tuple[Path, "pathspec.PathSpec"]]) -> bool:
    for base, spec in specs:
        if base not in path.parents:
            continue  # a .gitignore in a sibling directory
        relative = path.relative_to(base).as_posix() + ("/" if is_dir else "")
        if spec.match_file(relative):
            return True
    return False


def discover(paths: Iterable[Path], exclude: Sequence[str] = ()) -> List[Tuple[Path, Path]]:
    """``(shown path, real path)`` of every Python file to process, in a stable order."""
    exclude_spec = pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None
    seen = set()
    found: List[Tuple[Path, Path]] = []

    def take(shown: Path, root: Path) -> None:
        real = shown.resolve()
        if real in seen or not real.is_file():
            return
        if root is not None and real != root and root not in real.parents:
            return  # a link that leads out of the tree we were asked to work on
        seen.add(real)
        found.append((shown, real))

    for given in paths:
        given = Path(given)
        if not given.is_dir():
            if given.exists() or given.is_symlink():
                take(given, None)
            else:
                raise FileNotFoundError(f"{given}: no such file or directory")
            continue
        root = given.resolve()
        specs: List[Tuple[Path, pathspec.PathSpec]] = []
        if exclude_spec is not None:
            specs.append((given, exclude_spec))
        for directory, dirnames, filenames in os.walk(given):
            here = Path(directory)
            spec = _gitignore(here)
            if spec is not None:
                specs.append((here, spec))
            dirnames[:] = sorted(
                d for d in dirnames
                if d not in SKIP_DIRS and not (here / d).is_symlink() and not _is_virtualenv(here / d)
                and not _ignored(here / d, True, specs)
            )
            for name in sorted(filenames):
                path = here / name
                if name.endswith(".py") and not _ignored(path, False, specs):
                    take(path, root)
    return found
