"""The harness catches wrong migrations and passes correct ones (real scripts, real subprocesses)."""
from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from migrate.harness import VerifyOptions, report, verify_scripts
from migrate.harness.cli import verify

from harness_support import SCRIPTS, traced, variant

STEPS = VerifyOptions(steps=3, device="cpu", timeout=60)


def _app() -> typer.Typer:
    """The registration the main CLI uses (plus a second command, so `verify` is a subcommand)."""
    app = typer.Typer()
    app.command("verify")(verify)
    app.command("noop")(lambda: None)
    return app


def test_backward_twice_is_caught_with_its_step_and_the_responsible_line(style_case, tmp_path):
    result = CliRunner().invoke(_app(), [
        "verify", str(style_case / "legacy.py"), str(style_case / "bad_migration.py"), "--steps", "3",
        "--device", "cpu", "--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "r.xml")])
    assert result.exit_code == 1, result.output
    data = json.loads((tmp_path / "r.json").read_text())
    first = data["first_divergence"]
    assert (first["kind"], first["step"]) == ("outcome", 2)
    assert "RuntimeError" in first["note"] and "backward through the graph a second time" in first["note"]
    assert data["culprits"][0]["line"] == 59 and "requires_grad" in data["culprits"][0]["text"]
    assert "outcome" in result.output and "step 2" in result.output
    failures = [c for c in ET.parse(tmp_path / "r.xml").getroot() if c.find("failure") is not None]
    assert [c.get("name") for c in failures] == ["outcome"]


def test_retain_graph_agrees_numerically_but_uses_more_memory(style_case):
    result = verify_scripts(style_case / "legacy.py", style_case / "bad_migration_retain_graph.py", STEPS)
    assert (result.verdict, result.exit_code) == ("different", 1)
    (pair,) = result.pairs
    judged = {q.name: q.ok for q in pair.quantities}
    assert judged.pop("peak memory") is False
    assert all(ok is not False for ok in judged.values()), judged
    assert result.first_divergence.quantity == "peak memory"
    assert result.culprits[0].change.line == 79 and "retain_graph=True" in result.culprits[0].change.text
    assert "peak memory" in report.to_markdown(result)


def test_a_correct_hand_migration_is_equivalent(style_case, tmp_path):
    result = verify_scripts(style_case / "legacy.py", SCRIPTS / "style_transfer_migrated.py", STEPS)
    assert (result.verdict, result.exit_code) == ("equivalent", 0), result.reason
    names = {q.name for q in result.pairs[0].quantities}
    assert {"loss", "grad transformer.body.0.weight", "value transformer.body.4.bias", "peak memory"} <= names
    report.write_json(result, tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["verdict"] == "equivalent" and data["first_divergence"] is None
    assert [(len(r["losses"]), r["memory"]["steps"]) for r in data["runs"]] == [(3, 3), (3, 3)]


def test_dropped_detach_names_the_parameter_whose_gradient_changed(tmp_path):
    old = SCRIPTS / "two_stage_legacy.py"
    new = variant(tmp_path, old, "dropped_detach.py", ("decoder(Variable(h.data))", "decoder(h)"))
    result = verify_scripts(old, new, STEPS)
    first = result.first_divergence
    assert result.exit_code == 1
    assert (first.step, first.kind, first.param) == (1, "grad", "encoder.0.weight")
    assert "h.data" in result.culprits[0].change.old_text


def test_a_correct_detach_migration_is_equivalent_and_script_arguments_reach_both(tmp_path):
    old = SCRIPTS / "two_stage_legacy.py"
    new = variant(tmp_path, old, "migrated.py", ("decoder(Variable(h.data))", "decoder(h.detach())"),
                  ("Variable(torch.randn(32, 8)), Variable(torch.randn(32, 4))", "torch.randn(32, 8), torch.randn(32, 4)"))
    result = CliRunner().invoke(_app(), ["verify", str(old), str(new), "--device", "cpu",
                                         "--json", str(tmp_path / "r.json"), "--", "--steps", "2"])
    assert result.exit_code == 0, result.output
    runs = json.loads((tmp_path / "r.json").read_text())["runs"]
    assert [(r["steps"], r["end"]["reason"]) for r in runs] == [(2, "finished"), (2, "finished")]


def test_changed_hyper_parameter_shows_in_the_loss_at_step_1(tmp_path):
    old = SCRIPTS / "two_stage_legacy.py"
    new = variant(tmp_path, old, "changed_weight.py", ("0.5 * F.mse_loss", "0.05 * F.mse_loss"))
    result = verify_scripts(old, new, STEPS)
    first = result.first_divergence
    assert (result.exit_code, first.step, first.quantity) == (1, 1, "loss")
    assert "changes a constant" in result.culprits[0].reasons


def test_a_hang_times_out_with_exit_3_and_leaves_no_process(tmp_path, tracer):
    old = SCRIPTS / "two_stage_legacy.py"
    new = variant(tmp_path, old, "hangs.py", ("        optimizer.step()\n",
                                              "        optimizer.step()\n        __import__('time').sleep(3600)\n"))
    result = verify_scripts(old, new, VerifyOptions(steps=3, device="cpu", timeout=15))
    assert (result.verdict, result.exit_code) == ("error", 3)
    assert result.pairs[0].new.status == "timeout" and "new-cpu timed out after 15 s" in result.reason
    assert not traced(tracer)


def test_usage_errors_exit_2(tmp_path):
    runner = CliRunner()
    missing = runner.invoke(_app(), ["verify", str(tmp_path / "nope.py"), str(SCRIPTS / "gan.py")])
    assert missing.exit_code == 2
    bad_device = runner.invoke(_app(), ["verify", str(SCRIPTS / "gan.py"), str(SCRIPTS / "gan.py"), "--device", "tpu"])
    assert bad_device.exit_code == 2


def test_an_old_python_without_torch_is_reported_plainly():
    python = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if Path(p).exists()
                   and subprocess.run([p, "-c", "import torch"], capture_output=True).returncode), None)
    if python is None:
        pytest.skip("needs a python3 without torch")
    result = verify_scripts(SCRIPTS / "gan.py", SCRIPTS / "gan.py", VerifyOptions(device="cpu", old_python=python))
    assert result.exit_code == 3
    assert f"could not start the script under {python}: ModuleNotFoundError: No module named 'torch'" in result.reason


def test_compat_layer_runs_legacy_idioms_that_fail_on_current_torch(tmp_path):
    legacy = variant(tmp_path, SCRIPTS / "legacy_idioms.py", "legacy.py",
                     ("Variable(torch.randn(8, 4)).cuda()", "Variable(torch.randn(8, 4)).cuda(async=True)"))
    migrated = SCRIPTS / "legacy_idioms_migrated.py"
    without = verify_scripts(legacy, migrated, VerifyOptions(device="cpu", timeout=60))
    assert without.exit_code == 3 and "SyntaxError" in without.reason and "--compat" in without.reason
    assert without.pairs[0].new.status == "skipped"
    result = verify_scripts(legacy, migrated, VerifyOptions(device="cpu", timeout=60, compat=True))
    assert result.exit_code == 0, result.reason
    assert "eval requires_grad False" in result.pairs[0].old.stdout_tail


def test_compat_layer_accepts_removed_keywords_and_0_3_one_element_shapes():
    """TensorDataset(data_tensor=), backward(retain_variables=), a (1, C) output's loss against
    target[i] and torch.cat of one-number losses all raise on current torch; OLD runs with --compat."""
    legacy, migrated = SCRIPTS / "legacy_shapes.py", SCRIPTS / "legacy_shapes_migrated.py"
    without = verify_scripts(legacy, migrated, VerifyOptions(device="cpu", timeout=60))
    assert without.exit_code == 3 and "TensorDataset" in without.reason, without.reason
    result = verify_scripts(legacy, migrated, VerifyOptions(device="cpu", timeout=60, compat=True))
    assert result.exit_code == 0 and result.pairs[0].old.complete_steps == 3, result.reason
