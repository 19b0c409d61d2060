"""Running the command line as people do: `python -m migrate ...` in a real subprocess."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def torch_migrate(*args: str, cwd: Path, timeout: float = 300, python_flags=()) -> subprocess.CompletedProcess:
    """stdin closed, stdout and stderr captured apart (neither is a terminal)."""
    return subprocess.run([sys.executable, *python_flags, "-m", "migrate", *args], cwd=cwd, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=timeout)


def imported_modules(*args: str, cwd: Path) -> set:
    """The top-level packages `torch-migrate ARGS` imports, from `python -X importtime`."""
    result = torch_migrate(*args, cwd=cwd, python_flags=("-X", "importtime"))
    assert result.returncode == 0, result.stderr[-3000:]
    return {line.split("|")[-1].strip().split(".")[0] for line in result.stderr.splitlines()
            if line.startswith("import time:")}
