"""TM101: `Variable(x)` becomes `x` where `x` has no graph, else `x.detach()`; `requires_grad=True` kept exact."""
from __future__ import annotations

from codemods.base import Example
from codemods.variable.analysis import FactKind
from codemods.variable.common import HINT, VariableFamilyRule

UNWRAP_MESSAGES = {
    "data": "`Variable({source})`: `{source}` has no autograd history, the wrapper goes",
    "data_attribute": "`Variable({source})` is `{receiver}.detach()`",
    "detach": "`Variable({source})` detaches `{source}` from its graph on current PyTorch: kept as `.detach()`",
    "factory": "`Variable(<factory>, requires_grad=...)`: the factory takes `requires_grad=`",
    "fresh": "`Variable(<new tensor>, requires_grad=...)` becomes `.requires_grad_()` on the new tensor",
    "detach_grad": "`Variable(t, requires_grad=...)` leaves `t` alone: `t.detach().requires_grad_(...)`",
}
UNWRAP_HINT = "`Variable(t)` is `t.detach()` on current PyTorch; a bare `t` is the same only when `t` has no graph"


class VariableWrapper(VariableFamilyRule):
    """``Variable(t)`` is ``t.detach()`` on current PyTorch, not a wrapper.

    0.3 code wrapped every input in ``Variable``; since 0.4 the shim returns a
    detached leaf. Dropping it is exact only when ``t`` has no autograd history
    (data from a loader, a factory call, ``.data``); where ``t`` may carry a
    graph (a model output, arithmetic on parameters, a parameter of the
    function) the cut is kept as ``t.detach()``. ``requires_grad=True`` is kept
    minimal and exact (``t`` itself is never modified): a factory gets
    ``requires_grad=True``, a new tensor ``.requires_grad_()``, anything else
    ``.detach().requires_grad_()``. No ``requires_grad`` is ever added that the
    old code did not ask for.
    """

    code = "TM101"
    name = "variable-wrapper"
    summary = "`Variable(x)` becomes `x` when `x` has no graph, else `x.detach()`; `requires_grad=True` kept exact"
    triggers = ("Variable",)
    min_torch = "0.4"  # ``.detach()``, ``requires_grad_()``, factories' ``requires_grad=``
    kinds = {
        FactKind.BAD_CALL: (lambda d: f"`Variable(...)` with {d['problem']}: migrate by hand", HINT),
        FactKind.UNWRAP: (lambda d: UNWRAP_MESSAGES[d["strategy"]].format(**d), UNWRAP_HINT),
        FactKind.NOOP: (lambda d: f"`{d['names']} = Variable(...)`: the values have no autograd history, the "
                        "assignment is a no-op once the wrappers go and is removed", HINT),
        FactKind.MAP_VARIABLE: (lambda d: "`map(Variable, ...)`: `Variable` is `Tensor.detach` on current PyTorch",
                                "tensors are Variables since 0.4"),
        FactKind.VARIABLE_VALUE: (lambda d: "`Variable` used as a value: migrate by hand", HINT),
    }
    changes = (
        Example(
            "import torch\nfrom torch.autograd import Variable\n\n"
            "for data, target in train_loader:\n    data, target = Variable(data), Variable(target)\n"
            "    loss = F.nll_loss(model(data), target)\n",
            "import torch\n\nfor data, target in train_loader:\n    loss = F.nll_loss(model(data), target)\n",
        ),
        Example(
            "import torch\nfrom torch.autograd import Variable as V\nw = V(torch.randn(5, 3), requires_grad=True)\n"
            "x = V(torch.ones(5), requires_grad=False)\n",
            "import torch\nw = torch.randn(5, 3, requires_grad=True)\nx = torch.ones(5)\n",
        ),
        Example(
            "import torch\nfrom torch.autograd import Variable\nfake = netG(noise)\n"
            "output = netD(Variable(fake.data))\nstyle = Variable(vgg(style_img))\n",
            "import torch\nfake = netG(noise)\noutput = netD(fake.detach())\nstyle = vgg(style_img).detach()\n",
        ),
        Example(
            "import torch\nfrom torch.autograd import Variable\n\ndef repackage_hidden(h):\n"
            "    if type(h) == Variable:\n        return Variable(h.data)\n"
            "    return tuple(repackage_hidden(v) for v in h)\n",
            "import torch\nfrom torch.autograd import Variable\n\ndef repackage_hidden(h):\n"
            "    if type(h) == Variable:\n        return h.detach()\n"
            "    return tuple(repackage_hidden(v) for v in h)\n",
        ),
        Example(
            "import torch.autograd as ag\n\ndef step(x, hidden):\n"
            "    h = ag.Variable(hidden.new(2, 3).zero_())\n    p = ag.Variable(x, requires_grad=True)\n"
            "    return ag.Variable(x).cuda(), h, p\n",
            "\ndef step(x, hidden):\n    h = hidden.new(2, 3).zero_()\n    p = x.detach().requires_grad_()\n"
            "    return x.detach().cuda(), h, p\n",
        ),
        Example(
            "import torch\nfrom torch.autograd.variable import Variable\n"
            "noise = Variable(torch.FloatTensor(4, 100).normal_(0, 1), requires_grad=True)\n"
            "xs = list(map(Variable, batch))\n",
            "import torch\nnoise = torch.FloatTensor(4, 100).normal_(0, 1).requires_grad_()\n"
            "xs = list(map(torch.Tensor.detach, batch))\n",
        ),
        Example("import torch\nfrom torch.autograd import Variable\nx = Variable(*tensors)\n"),
    )
    keeps = (
        "from collections import namedtuple\nVariable = namedtuple('Variable', 'name value')\nv = Variable('x', 1)\n",
        "from sympy import Variable\nx = Variable('x')\n",
        "import torch\nclass Net:\n    def f(self, x):\n        return self.Variable(x)\n",
        "import torch\nclass Variable:\n    pass\nv = Variable()\n",
        "import torch\nx = torch.randn(3)\ny = x.detach()\n",
    )


RULE = VariableWrapper
