"""TM302: 0.3 reductions and counters that were Python numbers stay Python numbers via ``.item()``."""
from __future__ import annotations

import libcst as cst

from codemods import torchapi
from codemods.base import Example
from codemods.data.analysis import DataAnalysis, SiteKind, full_reduction_call, is_comparison, is_data
from codemods.data.common import DataSiteRule, unwrap_data
from codemods.model import index_value
from codemods.syntax import method_call


def data_item(attr: cst.Attribute) -> cst.CSTNode:
    """``loss.data`` -> ``loss.item()``."""
    return method_call(attr.value, "item", like=attr) if is_data(attr) else attr


def reduction_item(call: cst.Call) -> cst.CSTNode:
    """``x.data.sum()`` -> ``x.sum().item()``."""
    func = call.func
    inner = cst.Call(func=func.with_changes(value=unwrap_data(func.value)), args=call.args)
    return method_call(inner, "item", like=call)


class LegacyPythonNumbers(DataSiteRule):
    """In 0.3 a full reduction of a tensor (``x.data.sum()``, ``pred.eq(target).sum()``) returned a
    Python number, and ``total += loss.data`` made a 1-element counter read back with
    ``total[0]``. Now these are 0-dim tensors: counters silently become tensors (``total[0]``
    raises, ``'{}'.format(correct)`` and JSON dumps change, CUDA tensors pile up). ``.item()``
    keeps them Python numbers, as they were. Only where the value is used as a number (printed,
    compared, counted); a name that is later used as a tensor (``n.item()``, ``n[0]``) is left to
    TM303."""

    code = "TM302"
    name = "legacy-python-numbers"
    min_torch = "0.4"  # `.item()`
    summary = ("0.3 reductions and counters that were Python numbers (`x.data.sum()`, `correct += "
               "pred.eq(t).sum()`, `total += loss.data`) stay numbers via `.item()`")
    triggers = (".data", ").sum()")
    sites = {
        SiteKind.COUNTER_TERM: (lambda name: f"`{name}.data` added to a 0.3 counter: `{name}.item()` keeps the "
                                             "counter a Python number", data_item, False),
        SiteKind.NUMBER_REDUCTION: (lambda name: f"`{name}.data` reduced to a number: it was a Python number in "
                                                 "0.3 and is a 0-dim tensor now: `.item()`", reduction_item, False),
    }
    changes = (
        Example("correct = 0\nfor x, t in loader:\n    pred = model(x).data.max(1)[1]\n"
                "    correct += pred.eq(t).cpu().sum()\nprint(100. * correct / n)\n",
                "correct = 0\nfor x, t in loader:\n    pred = model(x).data.max(1)[1]\n"
                "    correct += pred.eq(t).cpu().sum().item()\nprint(100. * correct / n)\n"),
        Example("import torch.nn as nn\ncriterion = nn.CrossEntropyLoss()\n\n\ndef evaluate(data):\n"
                "    total_loss = 0\n    for x, y in data:\n"
                "        total_loss += len(x) * criterion(model(x), y).data\n    return total_loss[0] / len(data)\n",
                "import torch.nn as nn\ncriterion = nn.CrossEntropyLoss()\n\n\ndef evaluate(data):\n"
                "    total_loss = 0\n    for x, y in data:\n"
                "        total_loss += len(x) * criterion(model(x), y).item()\n    return total_loss / len(data)\n"),
        Example("import torch\n\noutput = netD(x)\nD_x = output.data.mean()\nprint('D(x): %.4f' % D_x)\n",
                "import torch\n\noutput = netD(x)\nD_x = output.mean().item()\nprint('D(x): %.4f' % D_x)\n"),
    )
    keeps = (
        "param_norm = p.grad.data.norm(2)\ntotal_norm += param_norm.item() ** 2\n",  # 0.4 style: used as a tensor
        "correct = 0\ncorrect += pred.eq(t).sum()\nprint(correct.item())\n",
        "total += loss\n",  # a graph kept alive: a hazard, not a 0.3 number
        "n = mask.sum(1)\n",
    )

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        """``correct += pred.eq(target).cpu().sum()``: a comparison count, a number in 0.3."""
        value = node.value
        if not (type(node.operator) is cst.AddAssign and type(node.target) is cst.Name
                and type(value) is cst.Call and type(value.func) is cst.Attribute
                and value.func.attr.value in ("sum", "mean") and full_reduction_call(value)):
            return
        receiver = value.func.value
        if is_data(receiver):
            return  # `x.data.sum()`: the `.data` site reports it
        while (type(receiver) is cst.Call and type(receiver.func) is cst.Attribute
               and (receiver.func.attr.value in torchapi.MOVE_METHODS or receiver.func.attr.value in ("long", "int"))
               or is_data(receiver)):
            receiver = receiver.func.value if type(receiver) is cst.Call else receiver.value
        if not is_comparison(receiver):
            return
        scope = self.ctx.model.scope_of(node)
        if not scope.uses.get(node.target.value):
            self.report(value, "a comparison count was a Python number in 0.3 and is a 0-dim tensor now: `.item()`",
                        lambda call: method_call(call, "item"))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        """``total_loss[0]`` of a counter that TM302 turns into a Python number."""
        if not (type(node.value) is cst.Name and index_value(node) == 0):
            return
        analysis = self.ctx.analysis(DataAnalysis)
        if not analysis.has_data:
            return
        scope = analysis.model.scope_of(node)
        name = node.value.value
        if name in scope.bindings and analysis.converted_accumulator(name, scope):
            self.report(node, f"`{name}` is a Python number once its `.data` terms are `.item()`: "
                              f"`{name}[0]` becomes `{name}`",
                        lambda sub: sub.value.with_changes(lpar=sub.lpar, rpar=sub.rpar) if sub.lpar else sub.value)


RULE = LegacyPythonNumbers
