"""Localisation: after a divergence, both scripts re-run to its step with module hooks, and the
report names the layer (or parameter) where they part ways. Real scripts, real subprocesses."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from harness_support import SCRIPTS, variant
from migrate.harness import VerifyOptions, report, verify_scripts

LAYERED = SCRIPTS / "layered.py"
QUICK = VerifyOptions(steps=2, device="cpu", timeout=60, memory_steps=0, repeat=1)  # noise: test_harness_noise
WRONG_SOFTMAX = ("F.softmax(scores, dim=1)", "F.softmax(scores, dim=0)")


def test_a_rewritten_line_inside_a_layer_names_that_layer_in_every_report(tmp_path):
    new = variant(tmp_path, LAYERED, "new.py", WRONG_SOFTMAX)
    result = verify_scripts(LAYERED, new, QUICK)
    assert result.verdict == "different" and result.first_divergence.quantity == "loss"
    where = result.localization
    assert (where.where, where.module, where.module_class, where.step) == ("output", "model.decoder.attn", "Attention", 1)
    assert where.message.startswith("step 1: first difference at model.decoder.attn (Attention) output, max |Δ| ")
    assert where.message.endswith("inputs and weights equal") and where.max_abs > 1e-3
    assert where.lines == ["new.py:19 `weights = F.softmax(scores, dim=0)  # attention weights`"]
    assert where.message in report.to_markdown(result)
    report.write_json(result, tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["localization"]["module"] == "model.decoder.attn"
    report.write_junit(result, tmp_path / "r.xml")
    case = ET.parse(tmp_path / "r.xml").getroot().find("testcase[@name='model.decoder.attn']")
    assert "softmax(scores, dim=0)" in case.find("failure").get("message")


def test_a_moved_detach_names_the_first_parameter_in_backward_order(tmp_path):
    new = variant(tmp_path, LAYERED, "new.py", ("self.decoder(h) + self.skip(h.detach())",
                                                 "self.decoder(h.detach()) + self.skip(h)"))
    result = verify_scripts(LAYERED, new, QUICK)
    assert result.first_divergence.kind == "grad"
    where = result.localization
    # the forward agrees; backward reaches the encoder's bias before its weight
    assert (where.where, where.param, where.module) == ("gradient", "model.encoder.bias", "model.encoder")
    assert "module outputs agree" in where.message


@pytest.mark.slow
def test_renamed_modules_are_paired_by_call_order(tmp_path):
    new = variant(tmp_path, LAYERED, "new.py", WRONG_SOFTMAX, ("self.attn = Attention", "self.attention = Attention"),
                  ("self.attn(h)", "self.attention(h)"))
    where = verify_scripts(LAYERED, new, QUICK).localization
    assert (where.module, where.matched_by) == ("model.decoder.attn", "call order")
    assert "(NEW: model.decoder.attention)" in where.message


def test_an_equivalent_pair_is_not_re_run(tmp_path):
    """Bitwise alike: by default neither a second run of OLD nor a localisation re-run."""
    options = VerifyOptions(steps=2, device="cpu", timeout=60, memory_steps=0)
    result = verify_scripts(LAYERED, variant(tmp_path, LAYERED, "new.py", ("# skip path", "# the skip path")), options)
    assert result.verdict == "equivalent" and result.localization is None
    assert len(result.runs) == 2
