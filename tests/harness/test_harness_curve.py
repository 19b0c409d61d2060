"""--mode curve: runs that are never bitwise alike, judged by their loss curves and final values."""
from __future__ import annotations

import importlib.util

import pytest

from harness_support import SCRIPTS, variant
from migrate.harness import UsageError, VerifyOptions, report, verify_scripts
from migrate.harness.curve import sparkline

NOISY = SCRIPTS / "noisy_loader.py"
CURVE = VerifyOptions(device="cpu", timeout=60, memory_steps=0, mode="curve")


def test_curves_of_a_noisy_script_agree_and_a_changed_learning_rate_does_not(tmp_path):
    same = verify_scripts(NOISY, variant(tmp_path, NOISY, "same.py", ("# loss", "# the loss")), CURVE)
    assert same.verdict == "equivalent", same.reason
    assert len(same.runs) == 2  # no repeat in curve mode: the curve tolerance is the judge
    judged = {q.name: q.ok for q in same.pairs[0].quantities}
    assert judged["loss curve"] and judged["final value model.0.weight"]
    changed = verify_scripts(NOISY, variant(tmp_path, NOISY, "new.py", ("lr=0.1)", "lr=0.4)")), CURVE)
    first = changed.first_divergence
    assert changed.verdict == "different" and first.quantity == "loss curve"
    assert "steps beyond rtol 0.05 (at most 5% may be)" in first.note
    old_line, new_line = report._curve_lines(changed)
    assert old_line.startswith("cpu OLD ") and new_line.startswith("cpu NEW ") and old_line != new_line
    assert old_line in report.to_markdown(changed)


def test_sparkline_scales_both_curves_alike_and_averages_long_ones():
    assert sparkline([0, 1, 2, 3, 4, 5, 6, 7], 0, 7) == "▁▂▃▄▅▆▇█"
    assert sparkline([0, 0, 7, 7], 0, 14) == "▁▁▅▅"  # on the scale of both curves, not its own
    assert sparkline(list(range(200)), 0, 199, width=10) == "▁▂▂▃▄▅▆▇▇█"  # 20 steps per column
    assert sparkline([1.0, float("nan")], 0, 1) == "█·"


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is not None, reason="matplotlib is installed here")
def test_plot_without_matplotlib_is_a_clear_usage_error(tmp_path):
    with pytest.raises(UsageError, match="--plot needs matplotlib"):
        verify_scripts(NOISY, NOISY, VerifyOptions(device="cpu", plot=tmp_path / "curve.png"))


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="matplotlib is not installed")
def test_plot_writes_a_png(tmp_path):
    result = verify_scripts(NOISY, NOISY, VerifyOptions(device="cpu", memory_steps=0, mode="curve",
                                                        plot=tmp_path / "curve.png"))
    report.write_plot(result, tmp_path / "curve.png")
    assert (tmp_path / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
