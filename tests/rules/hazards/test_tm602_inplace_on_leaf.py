"""TM602: in-place operations on leaves that require grad raise; the no_grad fix makes them legal."""
import pytest
import torch

from codemods.torchapi import INPLACE_METHODS
from hazard_support import CASES, EXPECTED, check, load, located, rewritten


@pytest.mark.parametrize("context,flagged", [
    ("with torch.no_grad():", False),
    ("with torch.set_grad_enabled(False):", False),
    ("with torch.set_grad_enabled(phase == 'val'):", False),  # not known: not reported
    ("with torch.enable_grad():", True),
    ("if phase == 'val':", True),
])
def test_grad_mode_contexts(context, flagged):
    text = ("import torch\nimport torch.nn as nn\n\nfc = nn.Linear(2, 2)\nphase = 'val'\n"
            f"{context}\n    fc.bias.zero_()\n")
    assert located(check(text)) == ([("TM602", 7)] if flagged else [])


def test_inplace_on_leaves_raises():
    module = load(CASES / "inplace_bad.py")
    for hazard in module.HAZARDS:
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            hazard()


def _inplace_call(method):
    other = torch.ones(3, 3)
    index = torch.tensor([0])
    mask = torch.ones(3, 3, dtype=torch.bool)
    arguments = {
        "copy_": (other,), "fill_": (1.0,), "bernoulli_": (0.5,), "geometric_": (0.5,), "add_": (1.0,),
        "sub_": (1.0,), "mul_": (2.0,), "div_": (2.0,), "addcmul_": (other, other), "addcdiv_": (other, other),
        "clamp_": (0.0, 1.0), "clamp_min_": (0.0,), "clamp_max_": (1.0,), "clip_": (0.0, 1.0), "pow_": (2,),
        "lerp_": (other, 0.5), "masked_fill_": (mask, 0.0), "index_fill_": (0, index, 0.0),
        "index_add_": (0, index, torch.ones(1, 3)), "index_copy_": (0, index, torch.ones(1, 3)),
        "index_put_": ((index,), torch.tensor(1.0)), "scatter_": (0, torch.zeros(1, 3, dtype=torch.long), 1.0),
        "scatter_add_": (0, torch.zeros(1, 3, dtype=torch.long), torch.ones(1, 3)), "renorm_": (2, 0, 1.0),
        "transpose_": (0, 1), "unsqueeze_": (0,), "fmod_": (2,), "remainder_": (2,), "addmm_": (other, other),
        "put_": (index, torch.tensor([1.0])), "masked_scatter_": (mask, torch.ones(9)), "fill_diagonal_": (0.0,),
        "copysign_": (other,),
    }
    return lambda tensor: getattr(tensor, method)(*arguments.get(method, ()))


@pytest.mark.parametrize("method", sorted(INPLACE_METHODS))
def test_inplace_table_raises_on_a_parameter_and_works_under_no_grad(method):
    call = _inplace_call(method)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        call(torch.nn.Parameter(torch.rand(3, 3) + 0.5))
    with torch.no_grad():
        call(torch.nn.Parameter(torch.rand(3, 3) + 0.5))


def test_no_grad_fix_makes_every_inplace_legal(tmp_path):
    module, outcome = rewritten(tmp_path, "inplace_bad.py", {"TM602"})
    assert "    with torch.no_grad():\n        fc.weight.fill_(0.01)  # TM602\n" in outcome.text
    assert outcome.text.count("with torch.no_grad():") == len(EXPECTED["inplace_bad.py"]["TM602"])
    for hazard in module.HAZARDS:
        hazard()
    model = torch.nn.Linear(2, 2)
    model(torch.randn(1, 2)).sum().backward()
    weight = model.weight.detach().clone()
    module.Momentumless(model.parameters()).step()
    assert not torch.equal(weight, model.weight)
