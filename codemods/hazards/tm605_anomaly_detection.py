"""TM605: autograd anomaly detection left on."""
from __future__ import annotations

from typing import Union

import libcst as cst

from codemods.base import Example, Rule
from codemods.hazards.analysis import DEBUG_WORDS, running_nodes, test_or_debug
from codemods.syntax import argument, literal
from codemods.torchapi import DETECT_ANOMALY, SET_DETECT_ANOMALY




class AnomalyDetectionOn(Rule):
    """``torch.autograd.set_detect_anomaly(True)`` / ``with torch.autograd.detect_anomaly():`` left on.

    Anomaly mode records a traceback for every autograd node and checks every backward for NaN: training runs
    2-3x slower (seed 002), and any NaN in backward becomes an error. It is a debugging switch; left on in a
    training script it costs every run. Not reported under an ``if`` on a debug/anomaly flag, in a function
    named ``debug*``/``test_*``, with a non-literal flag, or with an explicit ``check_nan=`` (a deliberate,
    configured use). The switch is global: a module-level call in a file without backward (a loss module)
    slows every script that imports it. The unsafe fix turns it off (``set_detect_anomaly(False)``) or
    removes the ``with``.
    """

    code = "TM605"
    name = "anomaly-detection-on"
    summary = "autograd anomaly detection left on for training (2-3x slower)"
    kind = "hazard"
    min_torch = "0.4"
    triggers = ("detect_anomaly",)
    changes = (
        Example(
            "import torch\n\ntorch.autograd.set_detect_anomaly(True)\nloss = model(x).sum()\nloss.backward()\n",
            "import torch\n\ntorch.autograd.set_detect_anomaly(False)\nloss = model(x).sum()\nloss.backward()\n",
            unsafe=True,
        ),
        Example(
            "import torch\n\nfor x in loader:\n    with torch.autograd.detect_anomaly():\n"
            "        loss = model(x).sum()\n        loss.backward()\n",
            "import torch\n\nfor x in loader:\n    loss = model(x).sum()\n    loss.backward()\n",
            unsafe=True,
        ),
    )
    keeps = (
        "import torch\n\nif args.debug:\n    torch.autograd.set_detect_anomaly(True)\n"
        "loss = model(x).sum()\nloss.backward()\n",
        "import torch\n\ntorch.autograd.set_detect_anomaly(args.detect_anomaly)\n"
        "torch.autograd.set_detect_anomaly(False)\n"
        "loss = model(x).sum()\nloss.backward()\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.qualname(node.func)
        if qualified not in SET_DETECT_ANOMALY:
            return
        flag = argument(node, "mode", 0)
        if flag is None or literal(flag.value) is not True or argument(node, "check_nan") or self._debug_only():
            return
        fix = lambda updated: updated.with_changes(args=[  # noqa: E731
            a.with_changes(value=cst.Name("False")) if a.keyword is flag.keyword and (
                a.keyword is not None or a is updated.args[0]) else a for a in updated.args])
        self.report(node, "anomaly detection switched on: every backward is 2-3x slower and any NaN raises", fix,
                    unsafe=True, hint="turn it on only while debugging (behind a --debug flag)")

    def visit_With(self, node: cst.With) -> None:
        items = [item for item in node.items if isinstance(item.item, cst.Call)
                 and self.ctx.qualname(item.item.func) in DETECT_ANOMALY and not argument(item.item, "check_nan")]
        if not items or self._debug_only():
            return
        self.report(node, "training under `detect_anomaly()`: every backward is 2-3x slower and any NaN raises",
                    self._unwrap, unsafe=True, hint="use it only while debugging (behind a --debug flag)")

    def _unwrap(self, updated: cst.With) -> Union[cst.With, cst.FlattenSentinel]:
        keep = [item for item in updated.items if not (
            isinstance(item.item, cst.Call) and self.ctx.qualname(item.item.func) in DETECT_ANOMALY)]
        if keep:
            keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(items=keep)
        if isinstance(updated.body, cst.SimpleStatementSuite):
            body = [cst.SimpleStatementLine(body=list(updated.body.body))]
        else:
            body = list(updated.body.body)
        body[0] = body[0].with_changes(leading_lines=[*updated.leading_lines, *body[0].leading_lines])
        return cst.FlattenSentinel(body)

    def _debug_only(self) -> bool:
        ancestors = self.ctx.ancestors
        for index, node in enumerate(ancestors):
            if isinstance(node, cst.If) and index + 1 < len(ancestors) and ancestors[index + 1] is not node.test:
                words = [n.value.lower() for n in running_nodes(node.test) if isinstance(n, cst.Name)]
                if any(word in w for w in words for word in DEBUG_WORDS):
                    return True
            if isinstance(node, cst.FunctionDef) and test_or_debug(node):
                return True
        return False


RULE = AnomalyDetectionOn
