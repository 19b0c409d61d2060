"""GPU checks: skipped cleanly on machines without CUDA."""
from __future__ import annotations

import pytest
import torch
from harness_support import SCRIPTS, variant

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


def test_device_all_compares_evaluation_printed_output_and_files_on_cuda(tmp_path):
    """The classifier moves itself to CUDA where the harness shows it one: evaluation calls, printed
    numbers and the checkpoint are compared on each device (dropout draws differ across devices, so
    the cross-device pair is not judged here)."""
    new = variant(tmp_path, SCRIPTS / "classifier.py", "new.py", ("    epoch_start = time.time()\n",
                                                                  "    epoch_start = time.time() - 0.25\n"))
    result = verify_scripts(SCRIPTS / "classifier.py", new, VerifyOptions(device="all", timeout=300))
    cpu, cuda, _ = result.pairs
    assert cpu.first_divergence is None and cuda.first_divergence is None, result.reason
    summary = {name: ok for name, ok, _ in cuda.summary()}
    assert summary["evaluation"] and summary["stdout"] and summary["files written"], summary
    assert cuda.new.artifacts and all(f.grad_mode == "no_grad" for f in cuda.new.forwards[:4])


ON_DEVICE = (("model = Net()", "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
                                "model = Net().to(device)"),
             ("torch.randint(0, 3, (12,))", "torch.randint(0, 3, (12,))\ndata, target = data.to(device), target.to(device)"))


def test_on_cuda_noise_is_measured_first_and_a_rewritten_layer_is_named(tmp_path):
    """On CUDA OLD runs twice by default before NEW is judged; the layer whose line changed is named."""
    old = variant(tmp_path, SCRIPTS / "layered.py", "old.py", *ON_DEVICE)
    new = variant(tmp_path, old, "new.py", ("F.softmax(scores, dim=1)", "F.softmax(scores, dim=0)"))
    result = verify_scripts(old, new, VerifyOptions(steps=2, device="cuda", timeout=300, memory_steps=0))
    assert [n.pair for n in result.noise] == ["cuda"] and len(result.repeats) == 1
    assert result.verdict == "different" and result.localization is not None, result.reason
    assert (result.localization.where, result.localization.module) == ("output", "model.decoder.attn")


def test_a_divergence_only_across_devices_is_localised_with_cross_device_tolerances(tmp_path):
    """Both scripts compute the attention differently on CUDA than on the CPU: each device agrees with
    itself, the CPU-to-CUDA pair does not, and its localisation re-runs OLD on the CPU and NEW on CUDA."""
    both = variant(tmp_path, SCRIPTS / "layered.py", "old.py", *ON_DEVICE,
                   ("F.softmax(scores, dim=1)", "F.softmax(scores, dim=0 if scores.is_cuda else 1)"))
    result = verify_scripts(both, variant(tmp_path, both, "new.py", ("# skip path", "# skip path, migrated")),
                            VerifyOptions(steps=2, device="all", timeout=300, memory_steps=0, repeat=1))
    cpu, cuda, cross = result.pairs
    assert cpu.first_divergence is None and cuda.first_divergence is None, result.reason
    assert result.divergence_pair is cross and result.localization.pair == "cpu→cuda"
    assert (result.localization.where, result.localization.module) == ("output", "model.decoder.attn")
