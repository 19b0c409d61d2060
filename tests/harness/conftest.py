"""Fixtures for the harness tests (helpers are in harness_support.py)."""
from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

# CI runs a fresh clone with the shared folder beside it, as ../shared.
STYLE_CASE = Path(__file__).resolve().parents[2] / ".." / "shared" / "cases" / "style_transfer"


@pytest.fixture
def style_case() -> Path:
    if not (STYLE_CASE / "legacy.py").is_file():
        pytest.skip(f"the shared style-transfer case is not at {STYLE_CASE.resolve()} (../shared beside the repo)")
    return STYLE_CASE


@pytest.fixture
def tracer(monkeypatch) -> str:
    """An environment variable every process a run starts inherits (setsid escapees too):
    ``traced(tracer)`` finds any that are still running."""
    monkeypatch.setenv("TORCH_MIGRATE_TEST_TRACER", uuid.uuid4().hex)
    return os.environ["TORCH_MIGRATE_TEST_TRACER"]
