"""GPU checks: skipped cleanly on machines without CUDA."""
from __future__ import annotations

import pytest
import torch
from harness_support import SCRIPTS

from migrate.harness import VerifyOptions, verify_scripts

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


def test_device_all_compares_cpu_cuda_and_cpu_against_cuda(style_case):
    result = verify_scripts(style_case / "legacy.py", SCRIPTS / "style_transfer_migrated.py",
                            VerifyOptions(steps=3, device="all", timeout=300))
    assert [p.label for p in result.pairs] == ["cpu", "cuda", "cpu→cuda"]
    cpu, cuda, cross = result.pairs
    assert cpu.first_divergence is None and cuda.first_divergence is None, result.reason
    assert cuda.old.memory.method == "torch.cuda.max_memory_allocated"
    assert next(q for q in cross.quantities if q.name == "loss").ok, result.reason


def test_retain_graph_memory_growth_is_flagged_on_cuda(style_case):
    result = verify_scripts(style_case / "legacy.py", style_case / "bad_migration_retain_graph.py",
                            VerifyOptions(steps=3, device="cuda", timeout=300))
    assert result.exit_code == 1 and result.first_divergence.quantity == "peak memory"
