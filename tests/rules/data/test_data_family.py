"""The data family with the other families, and on the samples.

Rewrites are checked for their text and, with real torch, for computing what the legacy code computed
(the legacy `.data` forms still run on torch 2.x, so old and new run side by side)."""
import ast

import pytest

import codemods
from codemods.engine import run_rules
from data_support import RULES, SAMPLES, migrate


def test_variable_of_data_composes_with_tm1xx():
    outcome = migrate("""
    from torch.autograd import Variable
    def repackage(h):
        return Variable(h.data)
    fake = netG(noise)
    out = netD(Variable(fake.data))
    """, rules=codemods.all_rules())
    assert "Variable" not in outcome.text and ".data" not in outcome.text
    assert "return h.detach()" in outcome.text and "netD(fake.detach())" in outcome.text


def test_loss_of_deprecated_call_composes_with_tm4xx():
    outcome = migrate("""
    import torch.nn as nn
    import torch.nn.functional as F
    test_loss += F.nll_loss(output, target, size_average=False).data[0]
    nn.init.normal(m.weight.data, 0.0, 0.02)
    """, rules=codemods.all_rules())
    assert "F.nll_loss(output, target, reduction='sum').item()" in outcome.text
    assert "nn.init.normal_(m.weight, 0.0, 0.02)" in outcome.text


@pytest.mark.parametrize("path", sorted(p.relative_to(SAMPLES).as_posix() for p in SAMPLES.rglob("*.py")))
def test_samples_with_every_rule_parse_and_are_idempotent(path):
    text = (SAMPLES / path).read_text(encoding="utf-8")
    first = run_rules(text, codemods.all_rules())
    compile(first.text, path, "exec")
    second = run_rules(first.text, codemods.all_rules())
    assert second.text == first.text
    left = [n for n in ast.walk(ast.parse(first.text)) if isinstance(n, ast.Subscript)
            and isinstance(n.value, ast.Attribute) and n.value.attr == "data"
            and isinstance(n.slice, ast.Constant) and n.slice.value == 0]
    flagged_lines = {f.line for f in second.findings if f.code == "TM301"}
    assert all(n.lineno in flagged_lines for n in left), "a `.data[0]` left without a diagnostic"


def test_nothing_applies_means_byte_identical():
    source = "# -*- coding: utf-8 -*-\r\nimport torch\r\nx = torch.zeros(3)  # .data\r\n"
    assert run_rules(source, RULES).text == source


# Programs bench/fuzz.py found where a second `rewrite` changed the file again (issue 20): one run must reach
# the final text. Each is rewritten with every rule, twice.
SETTLE_IN_ONE_RUN = {
    "doubled .data on a moved value": ("import torch\nh = images.cuda(0).data.data\n",
                                       "h = images.to(device).detach()\n"),
    "doubled .data, numpy in between": ("import torch\nout = h.data.cpu().numpy().data.data\n",
                                        "out = h.detach().cpu().numpy().data.data\n"),
    "numpy buffer's .data": ("from torch.autograd import Variable\nloss = criterion(Variable(images, "
                             "requires_grad=False).data.cpu().numpy().data.cpu().numpy(), target)\n",
                             ".cpu().numpy().data.cpu().numpy(), target)\n"),  # a numpy buffer's `.data` stays
    "a row wrapped in Variable": ("import torch\nx = torch.autograd.Variable(h.data[0], requires_grad=True)\n",
                                  "x = h.detach()[0].detach().requires_grad_()\n"),
    "a row wrapped in a volatile Variable": (
        "import torch.autograd as ag\nh += ag.Variable(model(x).data[0], volatile=True).view(-1)\n",
        "    h += model(x).detach()[0].view(-1)\n"),
    "a loss argument behind a Variable": (
        "import torch.nn.functional as F\nimport torch.autograd\n"
        "x = F.nll_loss(torch.autograd.Variable(torch.zeros(2).data[0]), target)\n",
        "torch.zeros(2).detach()[0].unsqueeze(0)"),
    "an element read through a redundant .data": (
        "import torch\nimport torch.nn as nn\ncriterion = nn.MSELoss()\n"
        "loss = criterion(torch.zeros(2).cuda().data.data[0], target)\n",
        "torch.zeros(2).to(device).detach()[0].unsqueeze(0)"),
    "evidence from another .data of the name": (
        "import torch\nh = images.data\nwith open('log.txt') as fh:\n    out = images.data.cpu().numpy()\n",
        "h = images.detach()\n"),
}


@pytest.mark.parametrize("source,expected", SETTLE_IN_ONE_RUN.values(), ids=list(SETTLE_IN_ONE_RUN))
def test_one_rewrite_reaches_the_final_text(source, expected):
    rules = codemods.all_rules()
    first = run_rules(source, rules)
    assert expected in first.text
    second = run_rules(first.text, rules)
    assert second.text == first.text and not [f for f in second.findings if f.applied]


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_below_0_4_every_fix_is_reported_and_left(rule):
    """Every fix writes 0.4 code (`.item()`, `.detach()`, `torch.no_grad()`, `alpha=`, stacks of 0-dim tensors)."""
    assert rule.min_torch == "0.4"
    for example in rule.changes:
        if example.after is None:
            continue
        below = run_rules(example.before, [rule], unsafe_fixes=True, min_torch=(0, 3))
        assert below.text == example.before and any(f.code == rule.code for f in below.findings)
        assert run_rules(example.before, [rule], unsafe_fixes=True, min_torch=(0, 4)).text == example.after
