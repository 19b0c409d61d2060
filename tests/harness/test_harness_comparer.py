"""Comparison and attribution on records built by the real encoder (no subprocess: fast)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from migrate.harness.attribution import diff_changes, load_change_map, rank
from migrate.harness.comparer import Check, Tolerance, compare_tensors
from migrate.harness.records import EncodedTensor, ExceptionRecord
from migrate.harness.child.recorder import TensorEncoder
from migrate.harness.runner import RunOutcome, RunSpec

FULL, FINGERPRINT = TensorEncoder(4096), TensorEncoder(16)


def encode(encoder: TensorEncoder, t: torch.Tensor) -> EncodedTensor:
    """What the parent reads back from the child's encoding of ``t``."""
    return EncodedTensor.from_dict(encoder.encode(t))
DEFAULT = Tolerance()


def test_default_tolerances_follow_assert_close_and_options_override_them():
    assert DEFAULT.for_dtype("float32") == (1.3e-6, 1e-5)
    assert DEFAULT.for_dtype("int64") == (0.0, 0.0)
    assert Tolerance(cross_device=True).for_dtype("float32") == (1e-3, 1e-4)
    assert Tolerance(rtol=0.1).for_dtype("float64") == (0.1, 1e-7)


@pytest.mark.parametrize("encoder", [FULL, FINGERPRINT], ids=["full", "fingerprint"])
def test_a_sign_flip_shows_although_every_norm_is_unchanged(encoder):
    t = torch.randn(8, 8)
    same = compare_tensors(encode(encoder, t), encode(encoder, t.clone()), DEFAULT)
    flipped = compare_tensors(encode(encoder, t), encode(encoder, -t), DEFAULT)
    assert same.ok and same.max_abs == 0
    assert not flipped.ok and " at [" in flipped.old


def test_a_fingerprint_catches_a_change_outside_its_sample():
    t = torch.randn(100, 100)
    sampled = set(encode(FINGERPRINT, t).sample_index)
    outside = next(i for i in range(t.numel()) if i not in sampled)
    changed = t.clone().view(-1)
    changed[outside] += 1.0
    check = compare_tensors(encode(FINGERPRINT, t), encode(FINGERPRINT, changed.view(100, 100)), DEFAULT)
    assert not check.ok and "differs" in check.note


def test_within_tolerance_passes_and_beyond_fails():
    t = torch.ones(10, dtype=torch.float64)
    assert compare_tensors(encode(FULL, t), encode(FULL, t + 5e-8), DEFAULT).ok
    beyond = compare_tensors(encode(FULL, t), encode(FULL, t + 1e-6), DEFAULT)
    assert not beyond.ok and math.isclose(beyond.max_rel, 1e-6, rel_tol=1e-3)


def test_nan_matches_nan_only_and_infinities_match_exactly():
    t = torch.tensor([1.0, float("nan"), float("inf")])
    assert compare_tensors(encode(FULL, t), encode(FULL, t.clone()), DEFAULT).ok
    assert not compare_tensors(encode(FULL, t), encode(FULL, torch.tensor([1.0, 0.0, float("inf")])), DEFAULT).ok
    assert not compare_tensors(encode(FULL, t), encode(FULL, torch.tensor([1.0, float("nan"), 1e38])), DEFAULT).ok


def test_a_missing_gradient_or_another_shape_is_a_difference():
    t = torch.zeros(3)
    assert compare_tensors(None, None, DEFAULT).ok
    assert compare_tensors(encode(FULL, t), None, DEFAULT).note == "None in NEW"
    assert not compare_tensors(encode(FULL, t), encode(FULL, torch.zeros(4)), DEFAULT).ok


def _failed_run(tmp_path: Path, script: Path, line: int) -> RunOutcome:
    """A NEW run as the runner reports one that raised at ``line`` of its mirrored copy."""
    mirror = tmp_path / "mirror"
    frames = [[str(mirror / script.name), line, "main"], ["/site-packages/torch/_tensor.py", 600, "backward"]]
    return RunOutcome(spec=RunSpec("new-cpu", script, script.parent), status="failed", reason="raised", returncode=1,
                      wall_time=1.0, exception=ExceptionRecord(step=2, type="RuntimeError", message="backward",
                                                                  frames=frames, oom=False), run_dir=str(mirror))


def test_diff_hunks_are_numbered_in_new_and_the_autograd_change_ranks_first(tmp_path):
    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text("import torch\nx = Variable(a)\ny = f(x)\nloss = y.sum()\nloss.backward()\n")
    new.write_text("import torch\nx = a.requires_grad_(True)\ny = f(x)\nloss = y.sum()\nloss.backward()\n")
    (change,) = diff_changes(old, new)
    assert (change.line, change.end_line, change.code, change.old_text) == (2, 2, "", "x = Variable(a)\n")
    divergence = Check(2, "outcome", "outcome", False, note="NEW raised RuntimeError: backward through the graph")
    (culprit,) = rank([change], divergence, _failed_run(tmp_path, new, 5))
    assert culprit.reasons == ("adds `requires_grad`", "drops `Variable`")


def test_a_change_map_names_the_rule_and_the_failing_line_wins(tmp_path):
    new = tmp_path / "new.py"
    new.write_text("a = 1\nb = g(a)\nc = h(b)\n")
    (tmp_path / "map.json").write_text(json.dumps([
        {"file": "new.py", "line": 2, "end_line": 2, "code": "TM101", "summary": "Variable(x) -> x"},
        {"file": "new.py", "line": 3, "end_line": 3, "code": "TM202", "summary": "h -> h"},
    ]))
    changes = load_change_map(tmp_path / "map.json", root=tmp_path)
    assert changes[0].text == "b = g(a)\n"
    divergence = Check(1, "outcome", "outcome", False, note="NEW raised ValueError")
    ranked = rank(changes, divergence, _failed_run(tmp_path, new, 3))
    assert [c.change.code for c in ranked] == ["TM202", "TM101"]
    assert ranked[0].reasons == ("contains the failing line 3",)
    with pytest.raises(ValueError):
        load_change_map([{"line": 1}], root=tmp_path)


def test_strings_and_comments_are_no_evidence(tmp_path):
    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text('"""Trains."""\na = 1\nloss = f(x)\nb = 2\nloss.backward()\n')
    new.write_text('"""Trains; retain_graph avoids an error."""\na = 1\nloss = f(x)  # no detach here\nb = 2\n'
                   'loss.backward(retain_graph=True)\n')
    divergence = Check(None, "peak memory", "memory", False)
    ranked = rank(diff_changes(old, new), divergence, _failed_run(tmp_path, new, 5))
    assert [c.change.line for c in ranked] == [5, 1, 3]
    assert ranked[0].reasons == ("adds `retain_graph`",) and ranked[1].score == ranked[2].score == 0



def test_sparse_gradients_are_compared_densely():
    embedding = torch.nn.Embedding(10, 3, sparse=True)
    embedding(torch.tensor([1, 2])).sum().backward()
    encoded = encode(FULL, embedding.weight.grad)
    assert encoded.shape == [10, 3] and compare_tensors(encoded, encoded, DEFAULT).ok
