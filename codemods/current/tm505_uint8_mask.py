"""TM505: uint8 masks used for indexing, ``masked_*`` and ``where`` become ``bool``."""
from __future__ import annotations

import libcst as cst

from codemods import torchapi
from codemods.base import Example, Rule
from codemods.current.analysis import Dtype, Evaluator
from codemods.syntax import argument, method_call, method_name


def is_boolean(node: cst.CSTNode) -> bool:
    """A comparison: its uint8 (legacy) and bool (current) results have the same 0/1 values."""
    if type(node) is cst.Comparison or method_name(node) in torchapi.BOOLEAN_METHODS | {"bool"}:
        return True
    return type(node) is cst.UnaryOperation and type(node.operator) is cst.BitInvert and is_boolean(node.expression)


class Uint8Mask(Rule):
    """uint8 masks (``ByteTensor``, ``.byte()``, ``dtype=torch.uint8``) were the legacy boolean type. Since
    1.2 masks are ``bool``: ``masked_fill``, ``masked_select``, ``masked_scatter`` and ``x[mask] = v`` now raise
    on uint8 masks, ``x[mask]`` and ``torch.where`` warn. ``mask.bool()`` at the use means exactly what the
    uint8 mask meant (non-zero selects); ``cmp.byte()`` becomes ``cmp.bool()``. A mask is uint8 when it is
    built so in its scope or returned so by a function of the file; a ``masked_*``/``where`` mask that is a
    parameter gets ``.bool()`` too when the file builds uint8 tensors (a no-op on bool). The producer is left
    as it is: other uses of the variable (``1 - mask``, sums) keep their uint8 arithmetic. ``.bool()`` needs
    torch 1.2."""

    code = "TM505"
    min_torch = "1.2"
    name = "uint8-mask"
    summary = "uint8 masks used for indexing/`masked_fill`/`masked_select`/`where` become `bool`"
    triggers = ("Byte", "byte", "uint8")
    changes = (
        Example("import torch\nmask = torch.ByteTensor([1, 0, 1])\nx.masked_fill_(mask, 0)\n",
                "import torch\nmask = torch.ByteTensor([1, 0, 1])\nx.masked_fill_(mask.bool(), 0)\n"),
        Example("import torch\ny = x[(x > 0).byte()]\n", "import torch\ny = x[(x > 0).bool()]\n"),
        Example("import torch\nm = torch.zeros(4, dtype=torch.uint8)\nx[m] = 0\n",
                "import torch\nm = torch.zeros(4, dtype=torch.uint8)\nx[m.bool()] = 0\n"),
        Example("import torch\nkeep = t.byte()\ny = torch.where(keep, a, b)\n",
                "import torch\nkeep = t.byte()\ny = torch.where(keep.bool(), a, b)\n"),
        Example("import torch\ndef pad_mask(n):\n    return torch.ByteTensor(n, 5).zero_()\n"
                "def attend(scores, mask):\n    return scores.masked_fill(mask, -1e9)\n",
                "import torch\ndef pad_mask(n):\n    return torch.ByteTensor(n, 5).zero_()\n"
                "def attend(scores, mask):\n    return scores.masked_fill(mask.bool(), -1e9)\n"),
    )
    keeps = (
        "import torch\nmask = x > 0\nx.masked_fill_(mask, 0)\n",
        "import torch\nimg = (x * 255).byte()\nout = img.float() / 255\n",
        "import torch\nm = torch.ByteTensor([1, 0])\ny = x[m.bool()]\n",
        "import torch\nidx = torch.LongTensor([0, 2])\ny = x[idx]\n",
        "import torch\ndef attend(scores, mask):\n    return scores.masked_fill(mask, -1e9)\nb = torch.uint8\n",
    )

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
        if type(node.slice) is cst.Index:
            self._check(node.slice.value)

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.model.qualname(node.func)
        if qualified in torchapi.MASK_FUNCTIONS:
            position = torchapi.MASK_FUNCTIONS[qualified]
            name = "condition" if qualified == "torch.where" else "mask"
        elif qualified is None and method_name(node) in torchapi.MASK_METHODS:
            position, name = torchapi.MASK_METHODS[method_name(node)], "mask"
        else:
            return
        mask = argument(node, name, position)
        if mask is not None:
            self._check(mask.value, passed_in=True)

    def _check(self, mask: cst.BaseExpression, passed_in: bool = False) -> None:
        evaluator, scope = Evaluator(self.ctx), self.ctx.model.scope_of(mask)
        kind = evaluator.dtype(mask, scope)
        if kind is not Dtype.UINT8 and not (passed_in and kind is Dtype.UNKNOWN and self._parameter(evaluator, mask)):
            return

        def fix(updated: cst.BaseExpression) -> cst.BaseExpression:
            if method_name(updated) == "byte" and not updated.args and is_boolean(updated.func.value):
                return updated.with_changes(func=updated.func.with_changes(attr=cst.Name("bool")))
            return method_call(updated, "bool")

        self.report(mask, "uint8 mask: masks are bool since PyTorch 1.2 (uint8 raises in masked_fill/"
                          "masked_select/index assignment)", fix)

    def _parameter(self, evaluator: Evaluator, mask: cst.BaseExpression) -> bool:
        """A mask passed in as a parameter, in a file that builds uint8 tensors: ``.bool()`` is exact for both
        uint8 and bool masks (masked_* raise on anything else)."""
        bound = evaluator.bindings(mask, self.ctx.model.scope_of(mask)) if type(mask) is cst.Name else None
        return evaluator.facts.makes_uint8 and bool(bound) and all(kind == "param" for kind, _, _ in bound)


RULE = Uint8Mask
