"""TM607: `requires_grad` on a tensor nothing optimises breaks the seed loop; dropping it fixes it."""
import pytest

from hazard_support import CASES, SECOND_BACKWARD, check, load, located, rewritten


PINN = """import torch
import torch.nn as nn


class PINN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(1, 1)

    def forward(self, x):
        u = self.net(x)
        return torch.autograd.grad(u.sum(), x, create_graph=True)[0] - u


model = PINN()
x = torch.linspace(0, 1, 8).unsqueeze(1).requires_grad_(True)
model(x).pow(2).mean().backward()
"""


def test_inputs_of_a_model_that_differentiates_them_are_used():
    assert located(check(PINN)) == []
    exec(compile(PINN, "<pinn>", "exec"), {})
    without = PINN.replace("return torch.autograd.grad(u.sum(), x, create_graph=True)[0] - u", "return u")
    assert located(check(without)) == [("TM607", 16)]


def test_unused_requires_grad_breaks_the_seed_loop():
    module = load(CASES / "unused_requires_grad_bad.py")
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
        module.style_transfer()
    module.constant_target(), module.run_batch_input(), module.run_legacy_inputs(), module.run_attribute_flag()


def test_requires_grad_fix_lets_the_seed_loop_run(tmp_path):
    module, outcome = rewritten(tmp_path, "unused_requires_grad_bad.py", {"TM607"})
    assert "style = style.repeat(2, 1, 1, 1).to(device)  # TM607" in outcome.text
    assert "target = torch.zeros(2, 4)  # TM607" in outcome.text
    assert "inputs = Variable(data)  # TM607" in outcome.text
    module.style_transfer(steps=3)
