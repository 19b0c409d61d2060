"""TM510: legacy autograd Functions become static ones called with `.apply`."""
import textwrap

import pytest
import torch

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


# Legacy Functions in the shapes public pre-0.4 code has them (written for these tests): a Dice coefficient
# that keeps attributes from forward for backward and reads `saved_variables`/`needs_input_grad`, a gradient
# reversal layer whose strength is a constructor argument, and a scaled shift with a defaulted one.
LEGACY_FUNCTIONS = """
import torch
from torch.autograd import Function


class DiceCoeff(Function):
    def forward(self, input, target):
        self.save_for_backward(input, target)
        eps = 0.0001
        self.inter = torch.dot(input.view(-1), target.view(-1))
        self.union = torch.sum(input) + torch.sum(target) + eps
        return (2 * self.inter + eps) / self.union

    def backward(self, grad_output):
        input, target = self.saved_variables
        grad_input = grad_target = None
        if self.needs_input_grad[0]:
            grad_input = grad_output * 2 * (target * self.union - self.inter) / (self.union * self.union)
        if self.needs_input_grad[1]:
            grad_target = None
        return grad_input, grad_target


class GradReverse(Function):
    def __init__(self, lambd):
        self.lambd = lambd

    def forward(self, x):
        return x.view_as(x)

    def backward(self, grad_output):
        return (grad_output * -self.lambd)


class ScaleShift(Function):
    def __init__(self, alpha, beta=0.5):
        super(ScaleShift, self).__init__()
        self.alpha = alpha
        self.beta = beta

    def forward(self, x):
        self.save_for_backward(x)
        return x * self.alpha + self.beta

    def backward(self, grad_output):
        x, = self.saved_tensors
        return grad_output * self.alpha


def grad_reverse(x, lambd=1.0):
    return GradReverse(lambd)(x)


class Head(torch.nn.Module):
    def __init__(self):
        super(Head, self).__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.dice = DiceCoeff()

    def forward(self, x, target):
        return self.dice(torch.sigmoid(self.fc(x)), target)


def run(x, target):
    dice = DiceCoeff()
    score = dice(torch.sigmoid(x), target)
    reversed_ = grad_reverse(x * 2, 0.3).sum()
    shifted = ScaleShift(3.0)(x).sum() + ScaleShift(2.0, beta=-1.0)(x).sum()
    return score, reversed_, shifted
"""


class ModernDice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, target):
        ctx.save_for_backward(input, target)
        ctx.inter = torch.dot(input.view(-1), target.view(-1))
        ctx.union = torch.sum(input) + torch.sum(target) + 0.0001
        return (2 * ctx.inter + 0.0001) / ctx.union

    @staticmethod
    def backward(ctx, grad_output):
        input, target = ctx.saved_tensors
        return grad_output * 2 * (target * ctx.union - ctx.inter) / (ctx.union * ctx.union), None


def test_real_legacy_function_shapes_run_and_give_the_hand_written_gradients():
    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        execute(LEGACY_FUNCTIONS)["run"](torch.randn(4), torch.rand(4))
    outcome = migrate(LEGACY_FUNCTIONS)
    assert codes(outcome, applied=False) == []
    text = outcome.text
    assert "def forward(ctx, x, lambd):\n        ctx.lambd = lambd\n" in text
    assert "return (grad_output * -ctx.lambd), None\n" in text
    assert "def forward(ctx, x, alpha, beta=0.5):" in text and "return grad_output * ctx.alpha, None, None" in text
    assert "input, target = ctx.saved_tensors" in text and "super(" not in text.split("class Head")[0]
    assert "GradReverse.apply(x, lambd)" in text and "self.dice = DiceCoeff.apply" in text
    assert "ScaleShift.apply(x, 3.0)" in text and "ScaleShift.apply(x, 2.0, -1.0)" in text
    done = execute(text)
    torch.manual_seed(0)
    x, target = torch.randn(4, dtype=torch.float64, requires_grad=True), torch.rand(4, dtype=torch.float64)
    score, reversed_, shifted = done["run"](x, target)
    (score + reversed_ + shifted).backward()
    # The hand-written modern equivalent of the three Functions.
    x2 = x.detach().clone().requires_grad_()
    expected_score = ModernDice.apply(torch.sigmoid(x2), target)
    expected = expected_score + (x2 * 2).sum().detach() + (x2 * 3.0 + 0.5).sum() + (x2 * 2.0 - 1.0).sum()
    expected.backward()
    assert torch.allclose(score, expected_score)
    assert torch.allclose(shifted, (x.detach() * 3.0 + 0.5).sum() + (x.detach() * 2.0 - 1.0).sum())
    reversal = -0.3 * 2 * torch.ones(4, dtype=torch.float64)  # d/dx of grad_reverse(2x): -lambd * 2
    assert torch.allclose(x.grad, x2.grad + reversal)
    head = done["Head"]()
    head(torch.randn(2, 4), torch.rand(2, 4)).backward()
    assert head.fc.weight.grad is not None


def test_converted_function_passes_gradcheck_with_constructor_arguments():
    text = migrate(LEGACY_FUNCTIONS).text
    done = execute(text)
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: done["ScaleShift"].apply(t, 1.5, 0.25), (x,))
    target = torch.rand(5, dtype=torch.float64)
    # The legacy Dice gradient ignores eps in the numerator: exact up to eps / union.
    assert torch.autograd.gradcheck(lambda t: done["DiceCoeff"].apply(t, target), (torch.rand(5, dtype=torch.float64,
                                    requires_grad=True),), atol=1e-3)


def test_state_that_the_conversion_cannot_carry_is_an_unsafe_fix():
    source = """
    import torch
    class Counted(torch.autograd.Function):
        def __init__(self, k):
            self.k = k
            self.buf = torch.zeros(1)
        def forward(self, x):
            self.buf.add_(1)
            return x * self.k
        def backward(self, g):
            return g * self.k
    y = Counted(2.0)(torch.ones(2, requires_grad=True))
    """
    outcome = migrate(source)
    assert outcome.text == textwrap.dedent(source) and codes(outcome, applied=False) == ["TM510", "TM510"]
    assert "fresh at every call" in outcome.findings[0].message
    converted = migrate(source, unsafe=True)
    assert "Counted.apply(torch.ones(2, requires_grad=True), 2.0)" in converted.text
    assert execute(converted.text)["y"].tolist() == [2.0, 2.0]


@pytest.mark.parametrize("source,reason", [
    ("import torch\nclass F(torch.autograd.Function):\n    def forward(self, a, b):\n        return a * b\n"
     "    def backward(self, g):\n        return g, g\ns = F().forward(x, y)\n", "used other than"),
    ("import torch\nclass F(torch.autograd.Function):\n    scale = 2\n    def forward(self, a):\n"
     "        return a * self.scale\n    def backward(self, g):\n        return g * self.scale\ny = F()(x)\n",
     "the class defines or inherits"),
    ("import torch\nclass F(torch.autograd.Function):\n    def forward(self, a):\n        return self.helper(a)\n"
     "    def helper(self, a):\n        return a\n    def backward(self, g):\n        return g\ny = F()(x)\n",
     "methods besides"),
    ("import torch\nclass F(torch.autograd.Function):\n    def __init__(self, k):\n        self.k = k\n"
     "    def forward(self, a):\n        return a * self.k\n    def backward(self, g):\n        return g * self.k\n"
     "f = F(2)\ny = f(x)\n", "stored and called later"),
    ("import torch\nclass F(torch.autograd.Function):\n    def __init__(self, k):\n        self.k = k\n"
     "    def forward(self, a, b):\n        return a * b * self.k\n    def backward(self, g):\n        return grads\n"
     "y = F(2)(x, z)\n", "cannot get the extra `None`"),
    ("import torch\nclass F(torch.autograd.Function):\n    def __init__(self, k):\n        self.k = k\n"
     "    def forward(self, a):\n        return a * self.k\n    def backward(self, g):\n        return g * self.k\n"
     "y = F(2)(a=x)\n", "call site passes inputs by keyword"),
])
def test_classes_or_uses_it_cannot_convert_are_reported(source, reason):
    outcome = migrate(source, unsafe=True)
    assert outcome.text == source and codes(outcome) == ["TM510"]
    assert reason in outcome.findings[0].message


@pytest.mark.parametrize("ret", ["torch.autograd.grad(y, x, g)", "grads", "(g * self.k,)"])
def test_a_backward_that_returns_a_tuple_of_one_gradient_is_not_given_a_bare_none(ret):
    source = ("import torch\nclass F(torch.autograd.Function):\n    def __init__(self, k):\n        self.k = k\n"
              "    def forward(self, x):\n        self.save_for_backward(x)\n        return x ** 2 * self.k\n"
              "    def backward(self, g):\n        x, = self.saved_tensors\n        grads = (g * 2 * x * self.k,)\n"
              "        with torch.enable_grad():\n            x = x.detach().requires_grad_()\n            y = x ** 2 * self.k\n"
              f"            return {ret}\ny = F(3.0)(torch.ones(2, requires_grad=True))\n")
    outcome = migrate(source, unsafe=True)
    if ret.startswith("("):  # a tuple literal: one more element
        assert "return (g * ctx.k, None)" in outcome.text and codes(outcome, applied=False) == []
        return
    assert outcome.text == source and "cannot get the extra `None`" in outcome.findings[0].message
