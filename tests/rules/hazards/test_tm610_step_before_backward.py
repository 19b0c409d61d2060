"""TM610: a backward through a forward that ran before an optimizer step updated its parameters raises on
current torch; the near-misses (the DCGAN order, backward before step, detached and no-grad reads) run. The
harness shows the legacy order failing where the reordered script runs."""
import subprocess
import sys

import pytest

from hazard_support import CASES, ROOT, STEP_INPLACE, check, load, located

SCRIPTS = ROOT / "tests" / "rules" / "hazards" / "scripts"


def test_flagged_orders_raise_on_current_torch():
    module = load(CASES / "step_order_bad.py")
    for hazard in module.HAZARDS:
        with pytest.raises(RuntimeError, match=STEP_INPLACE):
            hazard()


def test_message_names_the_forward_the_step_and_the_backward():
    findings = check((CASES / "step_order_bad.py").read_text()).findings
    first = next(f for f in findings if f.code == "TM610")
    assert first.line == 31
    assert "`D(fake)` (line 27)" in first.message and "(line 31)" in first.message and "(line 34)" in first.message
    assert not any(f.fixable for f in findings)


@pytest.mark.parametrize("source", [
    # the optimizer is not shown: unknown, never matched
    "opt = make_optimizer(model)\nloss = model(x).sum()\nopt.step()\nloss.backward()\n",
    # the forward is computed again after the step
    "import torch\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nloss = model(x).sum()\nopt.step()\n"
    "loss = model(x).sum()\nloss.backward()\n",
    # a step in another block (after the loop)
    "import torch\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor x in data:\n    loss = model(x).sum()\n"
    "    loss.backward()\nopt.step()\n",
])
def test_unproven_orders_are_left_alone(source):
    assert located(check(source)) == []


def test_the_scripts_differ_only_in_the_order():
    legacy = (SCRIPTS / "gan_step_order_legacy.py").read_text()
    reordered = (SCRIPTS / "gan_step_order_reordered.py").read_text()
    assert located(check(legacy)) == [("TM610", 19), ("TM610", 22)]
    assert located(check(reordered)) == []


@pytest.mark.slow
def test_harness_shows_the_legacy_order_failing_on_current_torch():
    legacy, reordered = SCRIPTS / "gan_step_order_legacy.py", SCRIPTS / "gan_step_order_reordered.py"
    old = subprocess.run([sys.executable, "-m", "migrate", "verify", "-q", str(legacy), str(reordered)],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert old.returncode == 3, old.stdout + old.stderr
    assert "OLD raised RuntimeError" in old.stdout and STEP_INPLACE in old.stdout
    same = subprocess.run([sys.executable, "-m", "migrate", "verify", "-q", str(reordered), str(reordered)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert same.returncode == 0, same.stdout + same.stderr


# Shapes of real GAN loops (written for these tests): both losses computed first, then D's update, then G's
# backward (flagged); and G's output scored again after D's step (left alone).
BOTH_LOSSES_FIRST = """import torch


def train(netG, netD, loader, optimizer_netG):
    optimizer_netD = torch.optim.Adam(netD.parameters())
    for real, z in loader:
        fake = netG(z)
        loss_netD = netD(fake.detach()).mean() - netD(real).mean()
        loss_netG = -netD(fake).mean()
        optimizer_netD.zero_grad()
        loss_netD.backward()
        optimizer_netD.step()
        optimizer_netG.zero_grad()
        loss_netG.backward()
        optimizer_netG.step()
"""


def test_losses_computed_before_the_discriminator_step_are_flagged():
    assert located(check(BOTH_LOSSES_FIRST)) == [("TM610", 12), ("TM610", 14)]
    rescored = BOTH_LOSSES_FIRST.replace("        optimizer_netG.zero_grad()\n",
                                         "        loss_netG = -netD(fake).mean()\n        optimizer_netG.zero_grad()\n")
    assert located(check(rescored)) == []
