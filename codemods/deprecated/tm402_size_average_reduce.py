"""TM402: ``size_average=``/``reduce=`` on losses become the equivalent ``reduction=``."""
from __future__ import annotations

from typing import Tuple

import libcst as cst

from codemods.base import Example
from codemods.deprecated.common import TableRule, argument, flag, with_args
from codemods.syntax import code, keyword
from codemods.torchapi.deprecations import LOSS_PARAMETERS, legacy_reduction


class SizeAverageReduce(TableRule):
    """``size_average=``/``reduce=`` on losses were replaced by ``reduction=`` (0.4.1) and now warn.
    The legacy pair maps exactly as ``torch.nn._reduction.legacy_get_string`` does (``None`` counts
    as ``True``; both true: ``'mean'``, only ``reduce``: ``'sum'``, else ``'none'``); the legacy pair
    overrides an explicit ``reduction``. ``'mean'`` (the default) is not written out. Positional
    arguments from ``size_average`` on become keywords. A non-literal value is reported, with an
    unsafe fix for ``size_average`` alone (``'mean' if x else 'sum'``, wrong if ``x`` is ``None``)."""

    code = "TM402"
    min_torch = "0.4.1"
    name = "size-average-reduce"
    summary = "`size_average=`/`reduce=` on losses become the equivalent `reduction=`"
    triggers = ("size_average", "reduce", "Loss(", "loss(")
    table = frozenset(LOSS_PARAMETERS)
    imports = ("torch",)
    changes = (
        Example("import torch.nn.functional as F\n\nloss = F.nll_loss(output, target, size_average=False)\n",
                "import torch.nn.functional as F\n\nloss = F.nll_loss(output, target, reduction='sum')\n"),
        Example("import torch.nn as nn\n\ncriterion = nn.CrossEntropyLoss(size_average=True, reduce=False)\n"
                "mse = nn.MSELoss(size_average=True)\n",
                "import torch.nn as nn\n\ncriterion = nn.CrossEntropyLoss(reduction='none')\nmse = nn.MSELoss()\n"),
        Example("import torch.nn as nn\n\ncriterion = nn.NLLLoss(weight, False, -1)\n",
                "import torch.nn as nn\n\ncriterion = nn.NLLLoss(weight, ignore_index=-1, reduction='sum')\n"),
        Example("import torch.nn as nn\n\ncriterion = nn.BCELoss(size_average=args.avg)\n",
                "import torch.nn as nn\n\ncriterion = nn.BCELoss(reduction='mean' if args.avg else 'sum')\n",
                unsafe=True),
    )
    keeps = (
        "import torch.nn as nn\n\ncriterion = nn.NLLLoss(reduction='sum')\n",
        "import numpy as np\n\nm = np.mean(x, keepdims=True)\nf(size_average=False)\n",
        "from functools import reduce\n\ntotal = reduce(add, xs)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not node.args:
            return
        params = LOSS_PARAMETERS.get(self.resolve(node.func) or "")
        if params is None:
            return
        size_average, reduce = argument(node, params, "size_average"), argument(node, params, "reduce")
        if (size_average is None and reduce is None) or any(a.star for a in node.args) \
                or len([a for a in node.args if a.keyword is None]) > len(params):
            return
        sa_value = None if size_average is None else flag(size_average.value)
        reduce_value = None if reduce is None else flag(reduce.value)
        if reduce_value is ... or (sa_value is ... and reduce_value is False):
            self.report(node, "`size_average`/`reduce` computed at run time: set `reduction=` "
                              "('mean', 'sum' or 'none') by hand")
            return
        if sa_value is ...:
            expression = code(size_average.value)
            reduction = f"'mean' if {expression} else 'sum'"
            self.report(node, f"`size_average={expression}`: `reduction={reduction}` (if it is never None)",
                        lambda updated: _reduction_call(updated, params, reduction), unsafe=True)
            return
        reduction = repr(legacy_reduction(sa_value, reduce_value))
        self.report(node, f"`size_average`/`reduce` -> `reduction={reduction}`",
                    lambda updated: _reduction_call(updated, params, reduction))


def _reduction_call(call: cst.Call, params: Tuple[str, ...], reduction: str) -> cst.Call:
    index = params.index("size_average")
    positional = [a for a in call.args if a.keyword is None and not a.star]
    keep = positional[:index]
    converted = [keyword(params[i], a.value, a) for i, a in enumerate(positional)
                 if index <= i < len(params) and params[i] not in ("size_average", "reduce", "reduction")]
    rest = [a for a in call.args if a.keyword is not None
            and a.keyword.value not in ("size_average", "reduce", "reduction")]
    stars = [a for a in call.args if a.star]
    added = [] if reduction == "'mean'" else [keyword("reduction", cst.parse_expression(reduction))]
    args = keep + converted + rest + added + stars
    if not args:
        return call.with_changes(args=())
    return with_args(call, args)


RULE = SizeAverageReduce
