"""TM510: legacy autograd Functions become static ones called with `.apply`."""
import textwrap

import pytest

from current_support import codes, execute, migrate


def test_legacy_function_is_made_static_and_gives_the_same_gradient():
    source = """
    import torch
    from torch.autograd import Function
    class Square(Function):
        def forward(self, x):
            self.save_for_backward(x)
            return x * x
        def backward(self, grad_output):
            x, = self.saved_tensors
            return 2 * x * grad_output
    x = torch.tensor([1.0, 3.0], requires_grad=True)
    Square()(x).sum().backward()
    """
    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        execute(textwrap.dedent(source))
    outcome = migrate(source)
    assert "Square.apply(x)" in outcome.text and outcome.text.count("@staticmethod") == 2
    assert execute(outcome.text)["x"].grad.tolist() == [2.0, 6.0]


def test_legacy_function_used_elsewhere_is_only_reported():
    source = "import torch\nclass F(torch.autograd.Function):\n    def forward(self, x):\n        return x\nf = F()\n"
    outcome = migrate(source)
    assert outcome.text == source and codes(outcome) == ["TM510"]
