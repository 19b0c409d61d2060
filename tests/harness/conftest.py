"""The shared style-transfer case lives outside the repo; tests that need it skip clearly without it."""
from __future__ import annotations

from pathlib import Path

import pytest

# CI runs a fresh clone with the shared folder beside it, as ../shared.
STYLE_CASE = Path(__file__).resolve().parents[2] / ".." / "shared" / "cases" / "style_transfer"


@pytest.fixture
def style_case() -> Path:
    if not (STYLE_CASE / "legacy.py").is_file():
        pytest.skip(f"the shared style-transfer case is not at {STYLE_CASE.resolve()} (../shared beside the repo)")
    return STYLE_CASE
