"""What the recorder sees in scripts as users write them."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from harness_support import SCRIPTS, run

from migrate.harness.comparer import Tolerance, compare_runs

CHILD_SIDE = sorted(p.name for p in (Path(__file__).resolve().parents[2] / "migrate" / "harness" / "child").glob("*.py"))


@pytest.mark.parametrize("name", CHILD_SIDE)
def test_child_side_code_parses_as_python_3_5(name):
    """--old-python runs these under the old script's interpreter."""
    source = (Path(__file__).resolve().parents[2] / "migrate" / "harness" / "child" / name).read_text()
    ast.parse(source, feature_version=(3, 5))
    imports = {alias.name.split(".")[0] for node in ast.walk(ast.parse(source))
               if isinstance(node, ast.Import) for alias in node.names}
    imports |= {node.module.split(".")[0] for node in ast.walk(ast.parse(source))
                if isinstance(node, ast.ImportFrom) and node.module}
    assert "migrate" not in imports and "typer" not in imports and "rich" not in imports


@pytest.fixture(scope="module")
def gan_run():
    return run(SCRIPTS / "gan.py")


def test_gan_steps_alternate_between_two_named_optimizers(gan_run):
    outcome = gan_run
    assert outcome.status == "ok" and outcome.end.mode == "optimizer"
    assert [s.optimizer for s in outcome.steps] == [0, 1] * 3
    d_step, g_step = outcome.steps[:2]
    assert set(d_step.grads) == {f"netD.{i}.{p}" for i in (0, 2) for p in ("weight", "bias")}
    assert set(g_step.grads) == {f"netG.{i}.{p}" for i in (0, 2) for p in ("weight", "bias")}
    assert len(d_step.losses) == 1 and d_step.slots["netD.0.weight"] == "opt0.group0.param0"


def test_patched_optimizer_step_records_what_the_global_hooks_record(gan_run, monkeypatch):
    """The fallback for torch < 2.0, forced here on the current torch."""
    hooked = gan_run
    monkeypatch.setenv("TORCH_MIGRATE_LEGACY_HOOKS", "1")
    patched = run(SCRIPTS / "gan.py")
    assert (hooked.header.hooks, patched.header.hooks) == ("global", "patched")
    pair = compare_runs("cpu", hooked, patched, Tolerance(0.0, 0.0))
    assert pair.first_divergence is None
    assert len(pair.quantities) > 10


def test_gradient_accumulation_keeps_every_backward_including_autograd_backward():
    outcome = run(SCRIPTS / "accumulate.py")
    assert [len(s.losses) for s in outcome.steps] == [4, 4]
    assert set(outcome.steps[0].grads) == {"model.weight", "model.bias"}


@pytest.mark.parametrize("args", [(), ("--use-grad",)])
def test_hand_written_updates_count_each_backward_as_a_step(args):
    outcome = run(SCRIPTS / "hand_updates.py", *args, steps=3)
    assert outcome.end.mode == "backward" and outcome.complete_steps == 3
    first, second = outcome.steps[:2]
    assert set(first.grads) == set(first.values) == {"w", "b"}
    assert first.values["w"].data != second.values["w"].data  # the update was seen
    assert first.losses[0].source == ("grad" if args else "backward")


def test_parameters_of_two_variables_with_one_name_are_all_recorded():
    outcome = run(SCRIPTS / "shadowing.py")
    assert set(outcome.steps[0].grads) == {"model.weight", "model.bias", "opt0.group0.param2",
                                              "opt0.group0.param3"}
