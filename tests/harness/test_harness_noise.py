"""Noise first: OLD runs again where it may disagree with itself, and NEW is judged against OLD's
own spread. Real scripts (data loader workers with an unseeded generator), real subprocesses."""
from __future__ import annotations

import json

import pytest

from harness_support import SCRIPTS, variant
from migrate.harness import VerifyOptions, report, verify_scripts
from migrate.harness.noise import NOISE_FACTOR

NOISY = SCRIPTS / "noisy_loader.py"
CPU = VerifyOptions(device="cpu", timeout=60, memory_steps=0)


def test_a_nondeterministic_old_is_reported_as_such_and_not_as_a_migration_bug(tmp_path):
    new = variant(tmp_path, NOISY, "new.py", ("# loss", "# the loss"))  # a migration that changes nothing
    result = verify_scripts(NOISY, new, VerifyOptions(device="cpu", timeout=60, memory_steps=0, repeat=3))
    assert result.verdict == "equivalent", result.reason
    assert result.reason.endswith("within OLD's own run-to-run noise (OLD is not deterministic)")
    (noise,) = result.noise
    assert not noise.deterministic and noise.repeats == 3 and noise.spread["loss"] > 1e-5  # beyond float32's table
    assert noise.message.startswith("OLD is not deterministic: loss varies by up to ")
    assert "cause: DataLoader with num_workers=2 and neither a seeded generator nor worker_init_fn" in noise.message
    assert [r.spec.label for r in result.runs] == ["old-cpu", "new-cpu", "old-cpu#2", "old-cpu#3"]
    assert noise.message in report.to_markdown(result)
    report.write_json(result, tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["noise"][0]["deterministic"] is False


def test_a_small_real_change_under_the_noise_is_still_caught(tmp_path):
    new = variant(tmp_path, NOISY, "new.py", ("lr=0.1)", "lr=0.105)"))
    result = verify_scripts(NOISY, new, CPU)
    assert result.verdict == "different"
    assert len(result.noise) == 1 and not result.noise[0].deterministic  # repeated by default: not bitwise equal
    first = result.first_divergence
    assert first.kind == "value" and first.step == 1
    spread = result.noise[0].spread[first.quantity]
    assert first.max_abs > NOISE_FACTOR * spread and f"beyond {NOISE_FACTOR:g} × OLD's own spread" in first.note
    assert result.localization.where == "unavailable"  # module outputs of two OLD runs differ anyway


@pytest.mark.slow
def test_a_seed_taken_from_the_clock_is_named_as_the_cause():
    clocked = SCRIPTS / "clock_seeded.py"
    (noise,) = verify_scripts(clocked, clocked, CPU).noise
    assert not noise.deterministic
    assert "cause: the script seeds from a value that changes between runs: torch.manual_seed(" in noise.message
