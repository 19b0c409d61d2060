"""TM407: the old keywords fail (or warn) on this torch; the new ones mean what the old ones meant."""
import pytest
import torch

from deprecated_support import execute, migrate, same


def test_retain_variables_is_a_type_error_and_retain_graph_keeps_the_graph():
    """TM407's premise on the installed torch: the old keyword fails, the new one means what it meant."""
    x = torch.ones(2, requires_grad=True)
    y = (x * x).sum()
    with pytest.raises(TypeError):
        y.backward(retain_variables=True)
    y.backward(retain_graph=True)
    y.backward()  # the graph was kept for a second pass
    assert torch.equal(x.grad, 4 * x.detach())


def applied(outcome):
    return [f.code for f in outcome.findings if f.applied]


LEGACY_KEYWORDS = """
import torch
import torch.nn as nn
torch.manual_seed(0)
parts = [torch.randn(2, 3), torch.randn(2, 3)]
w = torch.ones(3, requires_grad=True)
loss = (w * w).sum()
torch.autograd.backward(variables=[loss], grad_variables=[torch.tensor(2.0)], retain_variables=True)
first = w.grad.clone()
loss.backward(retain_variables=False)
net = nn.Linear(3, 1)
moved = net.cuda(device_id=0) if torch.cuda.is_available() else net
result = (torch.cat(seq=parts, dim=1), torch.stack(sequence=parts), first, w.grad, moved is net)
"""


def test_renamed_keywords_run_and_mean_what_they_meant():
    """The legacy spellings fail on this torch; the rewritten ones compute what 0.3 documented for them:
    the tensors joined, the gradient scaled by grad_tensors, a kept graph that a second backward walks."""
    outcome = migrate(LEGACY_KEYWORDS)
    assert applied(outcome) == ["TM407"] * 7
    for old in ("seq=", "sequence=", "variables=", "device_id="):
        assert old not in outcome.text.replace("retain_", "")
    result = execute(outcome.text)["result"]
    parts = execute(LEGACY_KEYWORDS.split("w = torch")[0])["parts"]
    same(result[0], torch.cat(parts, 1))
    same(result[1], torch.stack(parts))
    same(result[2], torch.full((3,), 4.0))  # d(sum w^2)/dw = 2w, times the grad_tensors 2
    same(result[3], torch.full((3,), 6.0))  # the retained graph's second backward adds 2w
    assert result[4] is True
    with pytest.raises(TypeError):
        execute(LEGACY_KEYWORDS)
