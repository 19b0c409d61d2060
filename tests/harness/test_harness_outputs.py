"""`verify` compares what a script does besides its training steps: evaluation forward passes,
printed output, logged metrics and the files it writes (real scripts, real subprocesses)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from harness_support import SCRIPTS, run, variant
from typer.testing import CliRunner

from migrate import driver
from migrate.harness import VerifyOptions, report, verify_scripts
from migrate.harness.comparer import Comparisons
from migrate.workflow import migrate_repo

from test_harness_equivalence import _app

CLASSIFIER = SCRIPTS / "classifier.py"
OPTIONS = VerifyOptions(device="cpu", timeout=120)


def _failing(result) -> dict[str, object]:
    return {q.name: q.first_bad for pair in result.pairs for q in pair.quantities if q.ok is False}


def _summary(result) -> dict[str, bool | None]:
    return {name: ok for name, ok, _ in result.pairs[0].summary()}


def test_an_equivalent_pair_whose_output_differs_only_in_timings_paths_and_addresses_is_equivalent(tmp_path):
    """Progress bars redrawn with \\r, durations, rates, timestamps, temp paths, object addresses,
    and each script's own name and folder all differ between the two runs."""
    pytest.importorskip("tensorboardX")
    (tmp_path / "old").mkdir()
    old = shutil.copy(CLASSIFIER, tmp_path / "old" / "train_legacy.py")
    new = variant(tmp_path, CLASSIFIER, "train.py", ("    epoch_start = time.time()\n",
                                                     "    epoch_start = time.time() - 0.25  # slower\n"))
    result = verify_scripts(Path(old), new, VerifyOptions(device="cpu", timeout=120, script_args=("--tensorboard",)))
    assert (result.verdict, result.exit_code) == ("equivalent", 0), result.reason
    summary = _summary(result)
    for comparison in ("evaluation", "stdout", "stderr", "metrics", "files written", "losses"):
        assert summary[comparison] is True, (comparison, summary)
    pair = result.pairs[0]
    assert "took" in pair.old.stdout and "\r" in pair.old.stderr and "0x" in pair.old.stdout
    names = {q.name for q in pair.quantities}
    assert {"tensorboard: test/loss", "logging: test loss", "print: average loss", "file checkpoint.pt",
            "file logs/metrics.csv"} <= names
    assert any(name.startswith("eval Sequential at train.py:47") for name in names)


def test_an_evaluation_only_change_is_found_with_its_step_and_call_site(tmp_path):
    new = variant(tmp_path, CLASSIFIER, "new.py", ("model(normalize(x))  # evaluation input",
                                                   "model(x)  # evaluation input"))
    result = verify_scripts(CLASSIFIER, new, OPTIONS)
    first = result.first_divergence
    assert result.exit_code == 1
    assert (first.kind, first.step) == ("eval", 4)
    assert first.quantity == "eval Sequential at new.py:47 (OLD tests/harness/scripts/classifier.py:47)"
    assert first.at.startswith("after step 3, 2 calls, call 1")
    assert "after step 3" in result.reason
    # Training itself is untouched: only the steps would have said "equivalent".
    assert all(q.ok is not False for q in result.pairs[0].quantities if q.kind in ("loss", "grad", "value"))


def test_every_comparison_can_be_switched_off_and_is_reported_as_skipped(tmp_path):
    new = variant(tmp_path, CLASSIFIER, "new.py", ("model(normalize(x))  # evaluation input",
                                                   "model(x)  # evaluation input"))
    flags = ["--no-compare-evaluation", "--no-compare-stdout", "--no-compare-stderr", "--no-compare-metrics",
             "--no-compare-artifacts"]
    result = CliRunner().invoke(_app(), ["verify", str(CLASSIFIER), str(new), "--device", "cpu", *flags,
                                         "--junit", str(tmp_path / "r.xml"), "--json", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    skipped = [c.get("name") for c in ET.parse(tmp_path / "r.xml").getroot() if c.find("skipped") is not None]
    assert skipped == ["evaluation", "stdout", "stderr", "metrics", "artifacts"]
    summary = json.loads((tmp_path / "r.json").read_text())["comparisons"][0]["summary"]
    assert {row["comparison"]: row["detail"] for row in summary}["stdout"] == "off (--no-compare-stdout)"


def test_a_halved_test_loss_and_a_zero_accuracy_are_caught_in_print_logging_and_tensorboard(tmp_path):
    """The issue's first report: changes inside test() went unnoticed."""
    pytest.importorskip("tensorboardX")
    new = variant(tmp_path, CLASSIFIER, "new.py", ("test_loss /= 48", "test_loss /= 96"),
                  ("accuracy = correct / 48  # accuracy", "accuracy = 0 * correct / 48  # accuracy"))
    result = verify_scripts(CLASSIFIER, new, VerifyOptions(device="cpu", timeout=120, script_args=("--tensorboard",)))
    failing = _failing(result)
    assert result.exit_code == 1 and result.first_divergence.kind == "metric"
    assert {"print: average loss", "logging: test loss", "tensorboard: test/loss", "tensorboard: test/accuracy",
            "stdout", "file checkpoint.pt", "file logs/metrics.csv"} <= set(failing)
    assert failing["tensorboard: test/loss"].step == 4 and "value 1 of 2" in failing["tensorboard: test/loss"].at
    stdout = failing["stdout"]
    assert stdout.at == "line 5" and stdout.step == 4
    assert stdout.old.startswith("Test epoch 1: average loss 1.0817") and "0.5409" in stdout.new
    markdown = report.to_markdown(result)
    assert "| stdout | DIFFERS |" in markdown and "  OLD: Test epoch 1: average loss" in markdown


def test_a_printed_value_that_became_a_tensor_is_reported_as_a_type_change(tmp_path):
    """`model(h).data[0][0] > 0.5` migrated to `model(h)[0][0] > 0.5` prints tensor(False) instead of False."""
    new = variant(tmp_path, CLASSIFIER, "new.py", ("model(test_data[:1]).data[0][0].item() > 0.5",
                                                   "model(test_data[:1])[0][0] > 0.5"))
    result = verify_scripts(CLASSIFIER, new, OPTIONS)
    first = result.first_divergence
    assert (result.exit_code, first.quantity, first.at) == (1, "stdout", "line 12")
    assert (first.old, first.new) == ("positive False", "positive tensor(False)")
    assert first.note.startswith("printed value changed type: False in OLD, tensor(False) in NEW")
    assert set(_failing(result)) == {"stdout"}


def test_a_checkpoint_that_differs_is_named_by_key(tmp_path):
    """An accuracy counter that became a tensor is saved as one."""
    new = variant(tmp_path, CLASSIFIER, "new.py", ('"accuracy": accuracy}  # checkpoint',
                                                   '"accuracy": torch.tensor(accuracy)}  # checkpoint'))
    result = verify_scripts(CLASSIFIER, new, OPTIONS)
    first = result.first_divergence
    assert result.exit_code == 1 and set(_failing(result)) == {"file checkpoint.pt"}
    assert (first.kind, first.at, first.note) == ("artifact", "accuracy", "type changed")
    assert (first.old, first.new) == ("float 0.3541666666666667", "Tensor float32[]")


def test_a_file_written_under_another_name_is_new_and_missing_unless_ignored(tmp_path):
    new = variant(tmp_path, CLASSIFIER, "new.py", ('open("logs/metrics.csv", "w")', 'open("logs/metrics.tsv", "w")'))
    result = verify_scripts(CLASSIFIER, new, OPTIONS)
    failing = _failing(result)
    assert set(failing) == {"file logs/metrics.csv", "file logs/metrics.tsv"}
    assert failing["file logs/metrics.csv"].note == "OLD wrote it, NEW did not"
    ignored = verify_scripts(CLASSIFIER, new, VerifyOptions(device="cpu", timeout=120, ignore_output=("logs/*",)))
    assert ignored.exit_code == 0, ignored.reason


def test_images_are_compared_by_pixel_within_one_level_and_arrays_by_element(tmp_path):
    pytest.importorskip("PIL")
    source = SCRIPTS / "writes_files.py"
    rounded_down = variant(tmp_path, source, "floor.py", (".round().to(torch.uint8)", ".floor().to(torch.uint8)"))
    assert verify_scripts(source, rounded_down, OPTIONS).exit_code == 0
    brighter = variant(tmp_path, source, "brighter.py", ("torch.sigmoid(weights)", "torch.sigmoid(weights + 0.1)"))
    result = verify_scripts(source, brighter, OPTIONS)
    failing = _failing(result)
    assert set(failing) == {"file weights.png"} and failing["file weights.png"].at == "pixels"
    assert failing["file weights.png"].max_abs > 1


def test_a_data_path_above_the_script_folder_works_in_a_git_repository_or_with_root(tmp_path):
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "data" / "values.txt").write_text("1.0 2.0 3.0\n")
    (project / "scripts").mkdir()
    script = ("import torch\nvalues = torch.tensor([float(v) for v in open('../data/values.txt').read().split()])\n"
              "w = torch.zeros(3, requires_grad=True)\nopt = torch.optim.SGD([w], lr=0.1)\n"
              "for _ in range(2):\n    opt.zero_grad()\n    (w * values).sum().backward()\n    opt.step()\n"
              "print(w.tolist())\n")
    old, new = project / "scripts" / "old.py", project / "scripts" / "new.py"
    old.write_text(script)
    new.write_text(script)
    lost = verify_scripts(old, new, OPTIONS)
    assert lost.exit_code == 3 and "FileNotFoundError" in lost.reason and "--root" in lost.reason
    assert "--compat" not in lost.reason
    rooted = verify_scripts(old, new, VerifyOptions(device="cpu", timeout=120, old_root=project, new_root=project))
    assert rooted.exit_code == 0, rooted.reason
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    assert verify_scripts(old, new, OPTIONS).exit_code == 0
    assert not (project / "scripts" / "__pycache__").exists() and sorted(p.name for p in project.iterdir()) == [
        ".git", "data", "scripts"]


@pytest.mark.slow
def test_a_train_then_infer_pipeline_runs_in_one_mirror_per_side(tmp_path):
    """infer.py loads the whole pickled model train.py saved: on OLD with --compat as legacy
    torch did (weights_only=False), on NEW after TM501's rewrite."""
    repo = tmp_path / "repo"
    shutil.copytree(SCRIPTS / "pipeline", repo)
    options = VerifyOptions(device="cpu", timeout=120, compat=True)
    card = migrate_repo(repo, ["train.py", "infer.py"], driver.Options(driver.WRITE), options, search=False)
    verdicts = {e.entry: e.verify for e in card.entries}
    assert {entry: v.verdict for entry, v in verdicts.items()} == {"train.py": "equivalent", "infer.py": "equivalent"}, \
        [v.reason for v in verdicts.values()]
    infer = verdicts["infer.py"].pairs[0]
    assert [f.site for f in infer.old.forwards] == ["infer.py:9"] and infer.old.forwards[0].grad_mode == "no_grad"
    assert [a.path for a in infer.new.artifacts] == ["scores.pt"]
    assert "weights_only=False" in (repo / "infer.py").read_text()
    assert "| `infer.py` | equivalent | evaluation ok," in card.to_markdown()
    again = shutil.copytree(SCRIPTS / "pipeline", tmp_path / "again")
    no_compat = migrate_repo(again, ["train.py", "infer.py"], driver.Options(driver.WRITE),
                             VerifyOptions(device="cpu", timeout=120, compat=False), search=False)
    assert no_compat.entries[0].verify.verdict == "equivalent"  # train.py needs no compatibility layer
    assert "Weights only load failed" in no_compat.entries[1].verify.reason and "--compat" in \
        no_compat.entries[1].verify.reason


def test_verbose_shows_each_runs_output_as_it_comes():
    result = CliRunner().invoke(_app(), ["verify", str(SCRIPTS / "two_stage_legacy.py"),
                                         str(SCRIPTS / "two_stage_legacy.py"), "--device", "cpu", "-v",
                                         "--new-python", sys.executable, "--", "--steps", "2"])
    assert result.exit_code == 0, result.output
    assert result.output.count("step 1 ") == 2  # the last line each run printed, once per run


def test_training_forwards_are_not_taken_for_evaluation():
    """The GAN's generator output feeds D's step detached and G's step attached: training, not evaluation; a
    call that a backward pass reached is recorded as training, with no outputs to compare."""
    outcome = run(SCRIPTS / "gan.py")
    assert outcome.status == "ok"
    assert {(f.site, f.grad_mode) for f in outcome.forwards} == {
        ("gan.py:15", "backward"), ("gan.py:16", "backward"), ("gan.py:20", "backward")}
    assert all(f.outputs == [] for f in outcome.forwards)
    evaluated = run(CLASSIFIER)
    assert [(f.after_step, f.site, f.grad_mode) for f in evaluated.forwards if f.grad_mode != "backward"] == [
        (3, "classifier.py:47", "no_grad")] * 2 + [(6, "classifier.py:47", "no_grad")] * 2 + [
        (6, "classifier.py:77", "grad")]
    assert [f.after_step for f in evaluated.forwards if f.grad_mode == "backward"] == [0, 1, 2, 3, 4, 5]


def test_comparisons_recorded_but_switched_off_are_not_recorded_either():
    outcome = run(CLASSIFIER, evaluation=False, metrics=False, artifacts=False)
    assert outcome.status == "ok" and len(outcome.steps) == 6
    assert (outcome.forwards, outcome.logs, outcome.scalars, outcome.artifacts) == ([], [], [], [])
    assert Comparisons(stdout=False).off() == ["stdout"]
