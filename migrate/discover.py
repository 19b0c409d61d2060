"""Which files a command works on.

Directories are walked for ``*.py`` and Jupyter notebooks ``*.ipynb`` (unless ``notebooks`` is off:
``--no-notebooks``, or ``notebooks = false`` in the config, which also skips notebooks named on the
command line); ``.git``, ``.ipynb_checkpoints`` (Jupyter's autosaved copies), caches, virtual environments
and anything a ``.gitignore`` (in the tree, or above it up to the
repository's top) or ``--exclude`` names are skipped. Files named on the
command line are always taken. Symlinks are never followed out of the root
they were found under, linked directories are not entered (their files are
reached through their real place, or not at all), and a file reached twice
(through a link) is listed once, under its first path.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, List, Optional, Sequence, Tuple

from codemods.commands import is_command_file

if TYPE_CHECKING:  # imported where a pattern is first read (a tree without one, served by the cache, starts faster)
    import pathspec

SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox",
             ".nox", ".eggs", "node_modules", "site-packages", ".torch-migrate-cache", ".ipynb_checkpoints"}

Specs = List[Tuple[Path, "pathspec.PathSpec"]]  # (absolute directory, the patterns that apply below it)


def _is_virtualenv(directory: Path) -> bool:
    return (directory / "pyvenv.cfg").exists() or (directory / "conda-meta").is_dir()


def _gitignore(directory: Path) -> Optional["pathspec.PathSpec"]:
    try:
        lines = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return _spec(lines)


def _spec(lines: Sequence[str]) -> "pathspec.PathSpec":
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _enclosing_gitignores(root: Path) -> Specs:
    """The ``.gitignore`` files above ``root`` up to its repository's top (none outside a repository)."""
    above: Specs = []
    for directory in root.parents:
        spec = _gitignore(directory)
        if spec is not None:
            above.append((directory, spec))
        if (directory / ".git").exists():
            return above
    return []


def _ignored(path: Path, is_dir: bool, specs: Specs) -> bool:
    for base, spec in specs:
        if base in path.parents and spec.match_file(path.relative_to(base).as_posix() + ("/" if is_dir else "")):
            return True
    return False


def _resolve(path: Path) -> Optional[Path]:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
        return None


def discover(paths: Iterable[Path], exclude: Sequence[str] = (), notebooks: bool = True,
             commands: bool = True) -> List[Tuple[Path, Path]]:
    """``(shown path, real path)`` of every Python file (and notebook, and command file: shell scripts,
    Makefiles, READMEs that may start training, ``codemods.commands``) to process, in a stable order.

    A path named on the command line is always listed: if it is a dangling or
    looping link or not a regular file, reading it says so. Files found by
    walking a directory are listed only when they are regular files inside it.
    """
    exclude_spec = _spec(exclude) if exclude else None
    suffixes = (".py", ".ipynb") if notebooks else (".py",)
    seen = set()
    found: List[Tuple[Path, Path]] = []

    def take(shown: Path, real: Path) -> None:
        if real not in seen:
            seen.add(real)
            found.append((shown, real))

    for given in paths:
        given = Path(given)
        if not given.is_dir():
            if not (given.exists() or given.is_symlink()):
                raise FileNotFoundError(f"{given}: no such file or directory")
            if notebooks or given.suffix != ".ipynb":
                take(given, _resolve(given) or given)
            continue
        root = given.resolve()
        specs = _enclosing_gitignores(root)
        if exclude_spec is not None:
            specs.append((root, exclude_spec))
        for directory, dirnames, filenames in os.walk(given):
            here = Path(directory)
            real_here = root / here.relative_to(given)  # the walk never enters links, so this is real
            spec = _gitignore(here)
            if spec is not None:
                specs.append((real_here, spec))
            dirnames[:] = sorted(
                d for d in dirnames
                if d not in SKIP_DIRS and not (here / d).is_symlink() and not _is_virtualenv(here / d)
                and not _ignored(real_here / d, True, specs)
            )
            for name in sorted(filenames):
                if (not (name.endswith(suffixes) or commands and is_command_file(name))
                        or specs and _ignored(real_here / name, False, specs)):
                    continue
                try:
                    mode = os.lstat(os.path.join(directory, name)).st_mode
                except OSError:
                    continue
                if stat.S_ISREG(mode):  # not a link, in a directory the walk reached without links: real
                    take(here / name, real_here / name)
                    continue
                real = _resolve(here / name)
                if real is not None and real.is_file() and root in real.parents:
                    take(here / name, real)
    return found
