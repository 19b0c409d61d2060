"""TM502: ``torch.full(size, <int>)`` keeps the legacy float dtype."""
from __future__ import annotations

from typing import Callable

import libcst as cst

from codemods.base import Example, Rule
from codemods.current.analysis import Dtype, Evaluator, has_keyword
from codemods.syntax import argument, literal


class FullIntFill(Rule):
    """``torch.full(size, 1)`` returned the default float dtype until PyTorch 1.6; since 1.7 an int fill gives
    int64 and a bool fill gives bool. DCGAN-style labels (``torch.full((b,), real_label)``) then crash
    ``BCELoss`` ("Found dtype Long but expected Float"). A float fill value (``1.0``, ``float(real_label)``)
    restores the legacy dtype exactly: it follows ``torch.get_default_dtype()`` as the legacy call did
    (``dtype=torch.float`` would not), and every int up to 2**53 converts exactly. A fill the file does not
    show to be an int gets ``float(...)`` only as an unsafe fix."""

    code = "TM502"
    min_torch = "0.4"
    name = "full-int-fill"
    summary = "`torch.full(size, <int>)` keeps the legacy float dtype (an int fill gives int64 since 1.7)"
    triggers = ("full(",)
    imports = ("torch",)
    changes = (
        Example("import torch\nlabel = torch.full((batch_size,), 1, device=device)\n",
                "import torch\nlabel = torch.full((batch_size,), 1.0, device=device)\n"),
        Example("import torch\nreal_label = 1\nlabel = torch.full((b,), real_label)\n",
                "import torch\nreal_label = 1\nlabel = torch.full((b,), float(real_label))\n"),
        Example("import torch\nm = torch.full((2, 2), -1)\n", "import torch\nm = torch.full((2, 2), -1.0)\n"),
        Example("import torch\ndef f(v):\n    return torch.full((3,), v)\n",
                "import torch\ndef f(v):\n    return torch.full((3,), float(v))\n", unsafe=True),
    )
    keeps = (
        "import torch\nx = torch.full((2,), 0.5)\n",
        "import torch\nx = torch.full((2,), 1, dtype=torch.long)\n",
        "import torch\nfake_label = 0.\ny = torch.full((2,), fake_label)\n",
        "import torch\ny = torch.full_like(x, 1)\n",
        "import numpy as np\ny = np.full((2,), 1)\n",
    )

    def visit_Call(self, node: cst.Call) -> None:
        model = self.ctx.model
        if model.qualname(node.func) != "torch.full" or has_keyword(node, "dtype", "out"):
            return
        fill = argument(node, "fill_value", 1)
        if fill is None:
            return
        value = literal(fill.value)
        message = ("`torch.full` with an integer fill returned the default float dtype before PyTorch 1.7; "
                   "it returns int64 (bool for a bool fill) now")
        if isinstance(value, int):  # bools too
            if abs(value) > 2 ** 53:
                self.report(node, message, hint="pass `dtype=torch.get_default_dtype()` to keep the legacy dtype")
                return
            self.report(node, message, self._replace_fill(lambda _: cst.parse_expression(repr(float(value)))))
            return
        kind = Evaluator(self.ctx).number(fill.value, model.scope_of(node))
        if kind is Dtype.FLOAT:
            return
        wrap = self._replace_fill(lambda old: cst.Call(func=cst.Name("float"), args=[cst.Arg(old)]))
        if kind is Dtype.SCALAR:
            self.report(node, message, wrap)
        else:
            self.report(node, message + " (if this fill is an int)", wrap, unsafe=True)

    @staticmethod
    def _replace_fill(make: Callable[[cst.BaseExpression], cst.BaseExpression]):
        def fix(updated: cst.Call) -> cst.Call:
            fill = argument(updated, "fill_value", 1)
            return updated.deep_replace(fill, fill.with_changes(value=make(fill.value)))
        return fix


RULE = FullIntFill
