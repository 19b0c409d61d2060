"""``[tool.torch-migrate]`` in ``pyproject.toml``: project defaults the command line overrides.

    [tool.torch-migrate]
    select = ["TM"]                 # rule codes or prefixes
    ignore = ["TM502"]
    exclude = ["third_party/"]      # gitignore-style globs
    per-file-ignores = { "tests/*" = ["TM6"] }
    notebooks = true                # also migrate Jupyter notebooks (*.ipynb)
    min-torch = "1.8"               # oldest torch the code must keep running on (default: the installed one)
    entry = ["train.py"]            # training entry points for `migrate`
    steps = 5                       # optimizer steps `verify` compares
    rtol = 1.3e-6
    atol = 1e-5
    memory-tolerance = 0.05

The file is found by walking up from the first path given (or the current
directory), as ruff and black do.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from codemods.versions import VersionError, installed_torch, parse

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib


class ConfigError(ValueError):
    pass


@dataclass
class Config:
    select: List[str] = field(default_factory=list)
    ignore: List[str] = field(default_factory=list)
    exclude: List[str] = field(default_factory=list)
    per_file_ignores: Dict[str, List[str]] = field(default_factory=dict)
    notebooks: bool = True
    min_torch: Optional[str] = None
    entry: List[str] = field(default_factory=list)
    steps: Optional[int] = None
    rtol: Optional[float] = None
    atol: Optional[float] = None
    memory_tolerance: Optional[float] = None
    source: Optional[str] = None  # the pyproject.toml it came from

    def to_dict(self) -> dict:
        return asdict(self)

    def target_torch(self, flag: Optional[str] = None) -> Tuple[int, ...]:
        """The oldest torch the rewritten code must run on: ``--min-torch``, else ``min-torch``, else the
        installed torch."""
        chosen = flag or self.min_torch
        if not chosen:
            return installed_torch()
        try:
            return parse(chosen)
        except VersionError as error:
            where = "--min-torch" if flag else f"{self.source}: min-torch"
            raise ConfigError(f"{where}: {error}") from None


def find_pyproject(start: Path) -> Optional[Path]:
    start = Path(os.path.abspath(start))  # not resolve(): the path may be a looping or dangling link
    for directory in (start if start.is_dir() else start.parent, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_config(paths: Sequence[Path] = ()) -> Config:
    pyproject = find_pyproject(Path(paths[0]) if paths else Path.cwd())
    if pyproject is None:
        return Config()
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{pyproject}: {error}") from None
    section = data.get("tool", {}).get("torch-migrate", {})
    known = {f.name.replace("_", "-"): f.name for f in fields(Config) if f.name != "source"}
    unknown = sorted(set(section) - set(known))
    if unknown:
        raise ConfigError(f"{pyproject}: unknown [tool.torch-migrate] keys: {', '.join(unknown)}")
    return Config(**{known[key]: value for key, value in section.items()}, source=str(pyproject))
