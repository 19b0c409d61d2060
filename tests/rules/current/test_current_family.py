"""The TM5xx family: the behaviour table, registration, all rules together on one legacy script."""
import ast
import importlib.util
import runpy
import textwrap
import warnings
from pathlib import Path

import pytest
import torch

import codemods
from codemods.current import BEHAVIOUR_CHANGES
from codemods.engine import run_rules

from current_support import RULES, codes, execute, migrate

BEHAVIOUR = Path(__file__).parents[1] / "legacy_behaviour"


@pytest.mark.parametrize("change", BEHAVIOUR_CHANGES, ids=lambda c: c["script"])
def test_behaviour_script_shows_the_change(change, monkeypatch):
    """Every table entry is backed by a script that asserts it on this torch."""
    script = BEHAVIOUR / change["script"]
    assert script.exists()
    if "torchvision" in change["script"] and importlib.util.find_spec("torchvision") is None:
        pytest.skip("torchvision is not installed")
    monkeypatch.syspath_prepend(str(BEHAVIOUR))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runpy.run_path(str(script), run_name="__behaviour__")


def test_behaviour_table_names_real_rules():
    rule_codes = {rule.code for rule in codemods.all_rules()}
    handled = {c["handling"] for c in BEHAVIOUR_CHANGES}
    assert {rule.code for rule in RULES} <= handled, "every TM5xx rule has its behaviour change in the table"
    assert {"TM702", "TM703"} <= handled, "the torchvision changes the ecosystem family handles have their rows"
    for change in BEHAVIOUR_CHANGES:
        assert set(change) == {"change", "version", "handling", "script"}
        assert change["handling"] in rule_codes or change["handling"].startswith(
            ("not handled: ", "harness compat", "nothing to do")), change


def test_rules_are_registered():
    assert set(RULES) <= set(codemods.all_rules())
    assert all(rule.code.startswith("TM5") for rule in RULES)


# -- all rules together ---------------------------------------------------------------------
LEGACY_SCRIPT = """
import argparse
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.optim import lr_scheduler

parser = argparse.ArgumentParser()
parser.add_argument('--save', default='model.pt')
args = parser.parse_args([])

class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return F.sigmoid(self.fc(x)).view(-1)

model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
criterion = nn.BCELoss()
data = torch.randn(8, 4)
for epoch in range(2):
    scheduler.step()
    label = torch.full((8,), 1)
    optimizer.zero_grad()
    output = model(Variable(data))
    loss = criterion(output, Variable(label))
    loss.backward()
    optimizer.step()
torch.save(model, args.save)
model = torch.load(args.save)
scores = model(Variable(data)).numpy()
mask = torch.ByteTensor([1, 0, 1, 0, 1, 0, 1, 0])
picked = data[:, 0].masked_select(mask)
half = torch.LongTensor([5, -5]) / 2
weights = np.zeros(3, dtype=np.float)
"""


def test_all_rules_compose_on_a_legacy_script(tmp_path, monkeypatch):
    outcome = run_rules(LEGACY_SCRIPT, codemods.all_rules(), unsafe_fixes=True)
    ast.parse(outcome.text)
    again = run_rules(outcome.text, codemods.all_rules(), unsafe_fixes=True)
    assert again.text == outcome.text, "not idempotent"
    applied = {f.code for f in outcome.findings if f.applied}
    assert {"TM501", "TM502", "TM503", "TM504", "TM505", "TM506", "TM509"} <= applied
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        done = execute(outcome.text)
    assert done["label"].dtype == torch.float32
    assert done["half"].tolist() == [2, -2]
    assert done["picked"].shape == (4,)
    assert done["scores"].shape == (8,)


def test_untouched_file_is_byte_identical():
    source = "# -*- coding: utf-8 -*-\r\nimport torch\r\nx = torch.full((2,), 0.5)  # fine\r\n"
    outcome = run_rules(source, codemods.all_rules())
    assert outcome.text == source and not [f for f in outcome.findings if f.code.startswith("TM5")]


def test_suppression_comment_silences_a_rule():
    source = "import torch\nlabel = torch.full((2,), 1)  # torch-migrate: ignore[TM502]\n"
    outcome = run_rules(source, RULES)
    assert outcome.text == source and outcome.findings == []


def test_recursive_functions_do_not_send_the_dtype_analysis_round_in_circles():
    """``depth(n)`` returns ``depth(n - 1)``: its result's dtype is unknown, so the division is left alone
    (this recursion once exhausted the stack on torch's own ``_inductor/scheduler.py``)."""
    source = """
        import torch


        def depth(n):
            if n == 0:
                return torch.zeros(2).long()
            return depth(n - 1)


        def ping(n):
            return pong(n)


        def pong(n):
            return ping(n) if n else torch.ones(1).long()


        a = depth(3) / 2
        b = ping(2) / 2
    """
    outcome = migrate(source)
    assert outcome.text == textwrap.dedent(source) and codes(outcome) == []


# -- --min-torch ------------------------------------------------------------------------------
# The oldest torch each fix's output needs (checked against the release notes): `weights_only=` 1.13,
# `rounding_mode=` 1.8 (`//` truncated before 1.13 and floors since: no older spelling means the same
# everywhere), `.bool()` 1.2, `align_corners=` 1.3.
NEEDS = {"TM501": (1, 13), "TM504": (1, 8), "TM505": (1, 2), "TM508": (1, 3)}


@pytest.mark.parametrize("code", sorted(NEEDS))
def test_fixes_under_an_older_min_torch_are_left_and_reported(code):
    rule = next(r for r in RULES if r.code == code)
    assert tuple(int(p) for p in rule.min_torch.split(".")) == NEEDS[code]
    example = next(e for e in rule.changes if e.after is not None and not e.unsafe)
    major, minor = NEEDS[code]
    older = migrate(example.before, [rule], min_torch=(major, minor - 1))
    assert older.text == example.before
    assert older.findings and all(not f.applied for f in older.findings)
    assert any(f"needs torch >= {rule.min_torch}" in f.message for f in older.findings)
    assert migrate(example.before, [rule], min_torch=NEEDS[code]).text == example.after


def test_every_rule_of_the_family_declares_its_torch():
    assert all("min_torch" in vars(rule) for rule in RULES)
