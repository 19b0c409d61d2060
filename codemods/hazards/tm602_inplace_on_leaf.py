"""TM602: an in-place operation on a leaf that requires grad, outside ``torch.no_grad()``."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example, Rule
from codemods.hazards.fixes import wrap_no_grad
from codemods.hazards.flow import flow_of




class InplaceOnLeaf(Rule):
    """In-place operation on a leaf tensor that requires grad, outside ``torch.no_grad()``.

    Parameters (``model.parameters()`` loop variables, ``layer.weight``/``.bias``, ``nn.Parameter``) and
    tensors made with ``requires_grad=True`` are leaves; ``p.copy_(...)``, ``w += ...``, ``w[0] = ...``,
    ``.zero_()``, ``.fill_()``, ``.uniform_()`` on them raise "RuntimeError: a leaf Variable that requires
    grad is being used in an in-place operation" (seed 002). Legacy code wrote through ``.data``, which the
    migration removes; the modern spelling is the same statement under ``with torch.no_grad():`` (the unsafe
    fix). ``.data``/``.grad`` writes, ``nn.init.*_`` (no_grad inside), no-grad blocks and functions, and
    modules the file freezes are left alone.
    """

    code = "TM602"
    name = "inplace-on-leaf"
    summary = "in-place operation on a parameter / leaf that requires grad outside `torch.no_grad()`"
    kind = "hazard"
    min_torch = "0.4"
    triggers = ("requires_grad", "parameters(", "Parameter(", ".weight", ".bias", "param_groups")
    changes = (
        Example(
            "import torch\nimport torch.nn as nn\n\nfc = nn.Linear(4, 2)\nfc.weight.fill_(0.01)\n",
            "import torch\nimport torch.nn as nn\n\nfc = nn.Linear(4, 2)\nwith torch.no_grad():\n"
            "    fc.weight.fill_(0.01)\n",
            unsafe=True,
        ),
        Example(
            "import torch\n\nw = torch.randn(3, requires_grad=True)\nloss = (w * 2).sum()\nloss.backward()\n"
            "w -= 0.1 * w.grad\n",
            "import torch\n\nw = torch.randn(3, requires_grad=True)\nloss = (w * 2).sum()\nloss.backward()\n"
            "with torch.no_grad():\n    w -= 0.1 * w.grad\n",
            unsafe=True,
        ),
        Example(
            "import torch\n\n\ndef soft_update(target, source, tau):\n"
            "    for t, s in zip(target.parameters(), source.parameters()):\n"
            "        t.copy_(tau * s + (1 - tau) * t)\n",
            "import torch\n\n\ndef soft_update(target, source, tau):\n"
            "    for t, s in zip(target.parameters(), source.parameters()):\n"
            "        with torch.no_grad():\n            t.copy_(tau * s + (1 - tau) * t)\n",
            unsafe=True,
        ),
    )
    keeps = (
        "import torch\nimport torch.nn as nn\n\nfc = nn.Linear(4, 2)\nwith torch.no_grad():\n"
        "    fc.weight.fill_(0.01)\nfc.bias.data.zero_()\nnn.init.xavier_uniform_(fc.weight)\n",
        "import torch\n\nw = torch.randn(3)\nw.add_(1)\nw.requires_grad_()\nloss = (w * 2).sum()\nloss.backward()\n"
        "w.grad.zero_()\n",
        "import torch\n\n\n@torch.no_grad()\ndef sgd(params, lr):\n    for p in params:\n"
        "        p.add_(p.grad, alpha=-lr)\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        for target, line, what in flow_of(self.ctx).inplace:
            fix = wrap_no_grad(self) if line is not None else None
            self.report(line if fix else target,
                        f"in-place {what}, a leaf that requires grad: 'a leaf Variable that requires grad is being "
                        "used in an in-place operation'", fix, unsafe=True,
                        hint="do it under `with torch.no_grad():` (or in a `@torch.no_grad()` function)")


RULE = InplaceOnLeaf
