"""TM304: in-place updates through `.data` become `torch.no_grad()` updates.

Rewrites are checked for their text and, with real torch, for computing what the legacy code computed
(the legacy `.data` forms still run on torch 2.x, so old and new run side by side)."""
import textwrap

import pytest
import torch

import codemods
from data_support import applied, execute, migrate


def test_sgd_update_matches_the_legacy_data_update():
    legacy = """
    import torch
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    x, y = torch.randn(8, 4), torch.randn(8, 3)
    lr = 0.1
    for step in range(3):
        loss = ((model(x) - y) ** 2).mean()
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data.add_(-lr, p.grad.data)
    """
    outcome = migrate(legacy, rules=codemods.all_rules())
    assert "with torch.no_grad():" in outcome.text and "p.add_(p.grad, alpha=-lr)" in outcome.text
    old, new = execute(legacy), execute(outcome.text)
    for a, b in zip(old["model"].parameters(), new["model"].parameters()):
        assert torch.equal(a, b)
        assert b.requires_grad and b.is_leaf


def test_optimizer_step_hand_written_adam_matches():
    legacy = """
    import math
    import torch
    torch.manual_seed(0)
    p = torch.nn.Parameter(torch.randn(5))
    exp_avg, exp_avg_sq = torch.zeros(5), torch.zeros(5)
    beta1, beta2, lr, wd = 0.9, 0.999, 0.01, 0.1
    for step in range(1, 4):
        p.grad = None
        (p ** 3).sum().backward()
        grad = p.grad.data
        exp_avg.mul_(beta1).add_(1 - beta1, grad)
        exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)
        denom = exp_avg_sq.sqrt().add_(1e-8)
        step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
        if wd != 0:
            p.data.add_(-wd * lr, p.data)
        p.data.addcdiv_(-step_size, exp_avg, denom)
    """
    outcome = migrate(legacy, rules=codemods.all_rules())
    assert "p.addcdiv_(exp_avg, denom, value=-step_size)" in outcome.text
    assert torch.equal(execute(legacy)["p"], execute(outcome.text)["p"])


def test_manual_regression_run_in_one_block_and_values_match():
    legacy = """
    import torch
    torch.manual_seed(0)
    w = torch.randn(3, 1, requires_grad=True)
    b = torch.randn(1, requires_grad=True)
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    for t in range(5):
        loss = ((x.mm(w) + b - y) ** 2).mean()
        loss.backward()
        # update
        w.data -= 0.1 * w.grad.data
        b.data -= 0.1 * b.grad.data

        # reset
        w.grad.data.zero_()
        b.grad.data.zero_()
    """
    outcome = migrate(legacy)
    assert outcome.text.count("with torch.no_grad():") == 1
    assert "    # update\n    with torch.no_grad():\n        w -= 0.1 * w.grad\n" in outcome.text
    assert "\n        # reset\n        w.grad.zero_()\n" in outcome.text
    old, new = execute(legacy), execute(outcome.text)
    assert torch.equal(old["w"], new["w"]) and torch.equal(old["b"], new["b"])
    assert new["w"].is_leaf and new["w"].requires_grad


def test_wgan_clamp_and_target_network_soft_update():
    legacy = """
    import torch
    torch.manual_seed(0)
    netD = torch.nn.Linear(3, 3)
    target = torch.nn.Linear(3, 3)
    for p in netD.parameters():
        p.data.clamp_(-0.01, 0.01)
    for tp, p in zip(target.parameters(), netD.parameters()):
        tp.data.copy_(0.1 * p.data + 0.9 * tp.data)
    """
    outcome = migrate(legacy)
    assert outcome.text.count("with torch.no_grad():") == 1
    assert "tp.copy_(0.1 * p + 0.9 * tp)" in outcome.text and "p.clamp_(-0.01, 0.01)" in outcome.text
    old, new = execute(legacy), execute(outcome.text)
    for a, b in zip(old["target"].parameters(), new["target"].parameters()):
        assert torch.equal(a, b)


def test_updates_inside_no_grad_and_suppressed_statements():
    outcome = migrate("""
    import torch
    with torch.no_grad():
        p.weight.data.zero_()
    q.weight.data.fill_(1)  # torch-migrate: ignore[TM304]
    r.weight.data.fill_(2)
    """)
    assert outcome.text == textwrap.dedent("""
    import torch
    with torch.no_grad():
        p.weight.zero_()
    q.weight.data.fill_(1)  # torch-migrate: ignore[TM304]
    with torch.no_grad():
        r.weight.fill_(2)
    """)


def test_updates_of_non_parameters_and_storage_swaps_stay():
    source = """
    def forward(self, h, mask):
        scores = self.attn(h)
        scores.data.masked_fill_(mask, -1e9)
        h.data = h.data.cuda()
        p.data = torch.zeros(3)
        return scores
    """
    outcome = migrate(source)
    assert outcome.text == textwrap.dedent(source) and not outcome.findings


def test_loop_with_other_statements_wraps_only_the_updates():
    outcome = migrate("""
    for p in model.parameters():
        if p.grad is None:
            continue
        p.data.add_(-lr, p.grad.data)
    """)
    assert outcome.text == textwrap.dedent("""
    import torch

    for p in model.parameters():
        if p.grad is None:
            continue
        with torch.no_grad():
            p.add_(p.grad, alpha=-lr)
    """)


@pytest.mark.parametrize("context", ["with torch.inference_mode():", "with torch.set_grad_enabled(False):",
                                     "with torch.autograd.no_grad():"])
def test_updates_where_grad_is_already_off_get_no_second_no_grad(context):
    source = f"""
    import torch
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    {context}
        for p in model.parameters():
            p.data.mul_(0.5)
    """
    outcome = migrate(source)
    assert applied(outcome) == ["TM304"]
    assert "no_grad():\n" not in outcome.text.replace(context, "") and "p.mul_(0.5)" in outcome.text
    legacy, migrated = execute(source), execute(outcome.text)
    for old, new in zip(legacy["model"].parameters(), migrated["model"].parameters()):
        assert torch.equal(old, new)


def test_updates_in_a_function_decorated_to_turn_grad_off():
    source = """
    import torch
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)

    @torch.inference_mode()
    def shrink(m):
        for p in m.parameters():
            p.data.mul_(0.5)

    shrink(model)
    """
    outcome = migrate(source)
    assert "with torch.no_grad()" not in outcome.text and "p.mul_(0.5)" in outcome.text
    legacy, migrated = execute(source), execute(outcome.text)
    assert all(torch.equal(a, b) for a, b in zip(legacy["model"].parameters(), migrated["model"].parameters()))


def test_grad_switched_on_again_inside_still_gets_no_grad():
    source = """
    import torch
    model = torch.nn.Linear(3, 2)
    with torch.no_grad():
        with torch.enable_grad():
            for p in model.parameters():
                p.data.mul_(0.5)
    """
    outcome = migrate(source)
    assert outcome.text.count("torch.no_grad()") == 2
    execute(outcome.text)
