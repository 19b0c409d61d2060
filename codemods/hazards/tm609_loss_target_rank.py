"""TM609: an element-wise loss given an (N, 1) input and an (N,) target."""
from __future__ import annotations

import libcst as cst

from codemods import torchapi
from codemods.base import Example, Rule
from codemods.hazards.shapes import loss_name, shapes
from codemods.syntax import argument, code, method_call


class LossTargetRank(Rule):
    """An element-wise loss (``BCELoss``, ``BCEWithLogitsLoss``, ``MSELoss``, ``L1Loss``, ``SmoothL1Loss``,
    ``HuberLoss`` and their ``F.*`` functions) whose input is a column (N, 1) and whose target is a vector (N,).

    0.3 broadcast the two with a warning. Since 0.4 the BCE losses raise ("Using a target size that is
    different to the input size"), and the regression losses broadcast to (N, N): every prediction is compared
    with every target, the loss is wrong and training goes on (only a UserWarning says so). Typical legacy
    code: a discriminator or regressor ending in ``nn.Linear(k, 1)`` scored against ``torch.ones(batch)``.
    The unsafe fix squeezes the input (``out.squeeze(1)``): the numbers change from the (N, N) broadcast's,
    which were never the intended ones. Reported only where the file proves both shapes; class targets
    (``CrossEntropyLoss``), inputs and targets of the same rank and unknown shapes are left alone.
    """

    code = "TM609"
    name = "loss-target-rank"
    summary = "element-wise loss of an (N, 1) input and an (N,) target: BCE raises, MSE/L1 silently broadcast"
    kind = "hazard"
    min_torch = "0.4"
    triggers = tuple(torchapi.ELEMENTWISE_LOSSES)
    imports = ("torch",)
    changes = (
        Example("import torch\nimport torch.nn as nn\n\nD = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())\n"
                "criterion = nn.BCELoss()\nx = torch.randn(8, 4)\nloss = criterion(D(x), torch.ones(8))\n",
                "import torch\nimport torch.nn as nn\n\nD = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())\n"
                "criterion = nn.BCELoss()\nx = torch.randn(8, 4)\nloss = criterion(D(x).squeeze(1), torch.ones(8))\n",
                unsafe=True),
        Example("import torch\nimport torch.nn.functional as F\n\n\ndef step(pred, y):\n"
                "    return F.mse_loss(pred.view(-1, 1), y.view(-1))\n",
                "import torch\nimport torch.nn.functional as F\n\n\ndef step(pred, y):\n"
                "    return F.mse_loss(pred.view(-1, 1).squeeze(1), y.view(-1))\n", unsafe=True),
    )
    keeps = (
        "import torch\nimport torch.nn as nn\n\nhead = nn.Linear(4, 10)\ncriterion = nn.CrossEntropyLoss()\n"
        "loss = criterion(head(torch.randn(8, 4)), torch.zeros(8, dtype=torch.long))\n",
        "import torch\nimport torch.nn as nn\n\nD = nn.Linear(4, 1)\ncriterion = nn.BCEWithLogitsLoss()\n"
        "loss = criterion(D(torch.randn(8, 4)), torch.ones(8, 1))\n",
        "import torch\nimport torch.nn as nn\n\nD = nn.Linear(4, 1)\ncriterion = nn.MSELoss()\n"
        "loss = criterion(D(torch.randn(8, 4)).view(-1), torch.ones(8))\n",
        "import torch.nn.functional as F\n\nfor x, y in loader:\n    loss = F.binary_cross_entropy(model(x), y)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        loss = loss_name(self.ctx.model, node)
        if loss is None:
            return
        given, target = argument(node, "input", 0), argument(node, "target", 1)
        if given is None or target is None or any(a.star for a in node.args):
            return
        found, scope = self.ctx.analysis(shapes), self.ctx.model.scope_of(node)
        if not (found.column(given.value, scope) and found.vector(target.value, scope)):
            return
        what = ("raises 'Using a target size that is different to the input size'" if torchapi.ELEMENTWISE_LOSSES[loss]
                else "broadcasts them to (N, N): a wrong loss, with only a UserWarning")
        inner = given.value

        def fix(updated: cst.Call) -> cst.Call:
            old = argument(updated, "input", 0)
            squeezed = method_call(old.value, "squeeze", [cst.Arg(cst.Integer("1"))])
            return updated.with_changes(args=[a.with_changes(value=squeezed) if a is old else a for a in updated.args])

        self.report(node, f"{loss} of `{code(inner)}` (N, 1) and `{code(target.value)}` (N,): since 0.4 it {what} "
                          "(0.3 broadcast with a warning)", fix, unsafe=True,
                    hint=f"give both one shape: `{code(inner)}.squeeze(1)` (or `{code(target.value)}.view(-1, 1)`)")


RULE = LossTargetRank
