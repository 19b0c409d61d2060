"""TM608: ``require_grad`` / ``require_grad_`` (missing ``s``)."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example, Rule
from codemods.hazards.analysis import TYPOS, hazard_facts, is_factory
from codemods.torchapi import PARAMETER, VARIABLE




class RequiresGradTypo(Rule):
    """``require_grad`` / ``require_grad_`` (missing ``s``).

    ``t.require_grad_(True)`` is an AttributeError only when that line runs (seed 000's hand migration);
    ``t.require_grad = True`` silently sets an unused attribute, so the tensor never requires grad;
    ``torch.zeros(3, require_grad=True)`` is a TypeError at run time. The unsafe fix spells it
    ``requires_grad``; not reported in a file that defines its own ``require_grad`` attribute or parameter.
    """

    code = "TM608"
    name = "requires-grad-typo"
    summary = "`require_grad` is not a PyTorch name: `requires_grad` / `requires_grad_`"
    kind = "hazard"
    min_torch = "0.4"
    triggers = ("require_grad",)
    changes = (
        Example("import torch\n\nx = torch.rand(3).require_grad_(True)\n",
                "import torch\n\nx = torch.rand(3).requires_grad_(True)\n", unsafe=True),
        Example("import torch\n\nw = torch.zeros(3)\nw.require_grad = True\n",
                "import torch\n\nw = torch.zeros(3)\nw.requires_grad = True\n", unsafe=True),
        Example("import torch\n\nw = torch.zeros(3, require_grad=True)\n",
                "import torch\n\nw = torch.zeros(3, requires_grad=True)\n", unsafe=True),
    )
    keeps = (
        "class Block:\n    def __init__(self, require_grad=False):\n        self.require_grad = require_grad\n\n"
        "    def freeze(self):\n        return not self.require_grad\n",
        "import torch\n\nx = torch.rand(3).requires_grad_(True)\n",
    )

    def visit_Module(self, node: cst.Module) -> None:
        self.own = hazard_facts(self.ctx).defines_typo

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in TYPOS and not self.own:
            fix = lambda updated: updated.with_changes(attr=cst.Name(TYPOS[updated.attr.value]))  # noqa: E731
            self.report(node, f"`{node.attr.value}` is not a tensor attribute (`{TYPOS[node.attr.value]}` is)", fix,
                        unsafe=True, hint=f"spell it `{TYPOS[node.attr.value]}`")

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is None or node.keyword.value != "require_grad" or self.own:
            return
        call = self.ctx.parent(1)
        qualified = self.ctx.qualname(call.func) if isinstance(call, cst.Call) else None
        if qualified and (is_factory(qualified) or qualified in VARIABLE or qualified in PARAMETER):
            fix = lambda updated: updated.with_changes(keyword=cst.Name("requires_grad"))  # noqa: E731
            self.report(node, "`require_grad=` is not a keyword of torch factories (`requires_grad=` is)", fix,
                        unsafe=True, hint="spell it `requires_grad=`")


RULE = RequiresGradTypo
