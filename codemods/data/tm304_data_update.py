"""TM304: in-place updates through ``p.data`` become ``with torch.no_grad():`` updates of ``p``."""
from __future__ import annotations

from typing import List, Set

import libcst as cst

from codemods.base import Example, Rule
from codemods.data.analysis import DataAnalysis, is_data
from codemods.data.common import unwrap_data
from codemods.deprecated import modern_signature
from codemods.syntax import code, spelled
from codemods.walk import walk


class _StripData(cst.CSTTransformer):
    """Inside ``torch.no_grad()``: ``p.data`` -> ``p``, and current signatures for the in-place calls."""

    def __init__(self, keep: Set[str]):
        super().__init__()
        self.keep = keep

    def leave_Attribute(self, original_node, updated_node):
        if is_data(updated_node) and code(updated_node.value) not in self.keep:
            return unwrap_data(updated_node)
        return updated_node

    def leave_Call(self, original_node, updated_node):
        return modern_signature(updated_node, tensor_receiver=True) or updated_node


class DataUpdate(Rule):
    """Manual updates through ``.data`` (``p.data.add_(-lr, p.grad.data)``, ``w.data -= lr *
    w.grad.data``, ``p.grad.data.zero_()``, ``p.data.clamp_(-c, c)``, ``m.weight.data.normal_()``)
    hid the change from autograd. The current idiom does it on the tensor itself under
    ``torch.no_grad()``: the same values, no graph recorded, and autograd can still report a
    parameter changed while a graph needs it. Only updates of parameters and their gradients
    (``.weight``/``.bias``, loop variables over ``.parameters()``/``group['params']``, names
    whose ``.grad`` is read, ``nn.Parameter``/``requires_grad=True`` leaves); one ``with`` wraps a
    run of consecutive update statements (or a loop/``if`` made only of them), with the current
    argument order (``p.add_(p.grad, alpha=-lr)``). An update already where grad is off (``no_grad``,
    ``inference_mode``, ``set_grad_enabled(False)``, as a ``with`` or a decorator) only loses its
    ``.data``. Not: ``x.data = y`` (a storage swap)."""

    code = "TM304"
    name = "data-update"
    # `torch.no_grad()`; `add_(t, alpha=)`/`addcmul_(a, b, value=)`: the ATen-generated signatures of 0.4,
    # where the scalar-first forms became the deprecated overloads (warned about since 1.5)
    min_torch = "0.4"
    summary = "in-place updates through `p.data` become `with torch.no_grad():` updates of `p` with current signatures"
    triggers = (".data",)
    changes = (
        Example("for p in model.parameters():\n    p.data.add_(-lr, p.grad.data)\n",
                "import torch\n\nwith torch.no_grad():\n    for p in model.parameters():\n"
                "        p.add_(p.grad, alpha=-lr)\n"),
        Example("import torch\nw = torch.randn(3, requires_grad=True)\n\n\ndef step(lr):\n"
                "    # gradient descent\n    w.data -= lr * w.grad.data\n\n    # reset\n    w.grad.data.zero_()\n"
                "    print(w)\n",
                "import torch\nw = torch.randn(3, requires_grad=True)\n\n\ndef step(lr):\n"
                "    # gradient descent\n    with torch.no_grad():\n        w -= lr * w.grad\n\n        # reset\n"
                "        w.grad.zero_()\n    print(w)\n"),
        Example("import torch\n\n\ndef weights_init(m):\n    classname = m.__class__.__name__\n"
                "    if classname.find('Conv') != -1:\n        m.weight.data.normal_(0.0, 0.02)\n"
                "    elif classname.find('BatchNorm') != -1:\n        m.weight.data.normal_(1.0, 0.02)\n"
                "        m.bias.data.fill_(0)\n",
                "import torch\n\n\ndef weights_init(m):\n    classname = m.__class__.__name__\n"
                "    with torch.no_grad():\n        if classname.find('Conv') != -1:\n"
                "            m.weight.normal_(0.0, 0.02)\n        elif classname.find('BatchNorm') != -1:\n"
                "            m.weight.normal_(1.0, 0.02)\n            m.bias.fill_(0)\n"),
        Example("import torch\n\nwith torch.inference_mode():\n    for p in model.parameters():\n"
                "        p.data.mul_(0.5)\n",
                "import torch\n\nwith torch.inference_mode():\n    for p in model.parameters():\n"
                "        p.mul_(0.5)\n"),
    )
    keeps = (
        "import torch\nh.data = h.data.cuda()\np.data = torch.zeros(3)\n",  # storage swaps
        "scores.data.masked_fill_(mask, -1e9)\n",  # not a parameter: inside forward, a graph hack
        "import torch\n\nwith torch.no_grad():\n    for p in model.parameters():\n        p.add_(p.grad, alpha=-lr)\n",
    )

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statement(node)

    def visit_For(self, node: cst.For) -> None:
        self._statement(node)

    def visit_If(self, node: cst.If) -> None:
        self._statement(node)

    def _statement(self, node: cst.CSTNode) -> None:
        analysis = self.ctx.analysis(DataAnalysis)
        if not analysis.has_data:
            return
        scope = analysis.model.scope_of(node)
        if not analysis.is_update(node, scope):
            return
        ancestors = self.ctx.ancestors
        if analysis.inside_update(ancestors[:-1], scope):
            return
        block = ancestors[-2]
        if type(block) not in (cst.IndentedBlock, cst.Module):
            return  # an `elif` branch: its `if` is the statement
        keep = {code(a.value) for a in walk(node) if is_data(a) and not analysis.tensor_evidence(a.value, scope)}
        if analysis.grad_off(node):
            fix = lambda updated: updated.visit(_StripData(keep))  # noqa: E731
        else:
            fix = self._grouped_fix(analysis, analysis.run_of(node, block, scope, self.code), node, keep)
        self.report(node, "in-place update through `.data`: update the tensor itself under `torch.no_grad()`", fix)

    def _grouped_fix(self, analysis: DataAnalysis, run: List[cst.CSTNode], node: cst.CSTNode, keep: Set[str]):
        """Statements before the last of a run move into the ``with`` that the last one builds."""
        stash = analysis.stashes.setdefault(id(run[0]), [])
        last = node is run[-1]

        def fix(updated):
            stripped = updated.visit(_StripData(keep))
            if not last:
                stash.append(stripped)
                return cst.RemoveFromParent()
            statements = [*stash, stripped]
            stash.clear()
            return self._no_grad_block(statements)
        return fix

    def _no_grad_block(self, statements: List[cst.CSTNode]) -> cst.With:
        first = statements[0]
        return cst.With(
            items=[cst.WithItem(item=cst.Call(func=spelled(self.ctx, "torch.no_grad")))],
            body=cst.IndentedBlock(body=[first.with_changes(leading_lines=()), *statements[1:]]),
            leading_lines=first.leading_lines,
        )


RULE = DataUpdate
