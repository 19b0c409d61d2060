"""TM504: ``/`` on integer tensors keeps the legacy truncation with ``rounding_mode="trunc"``."""
from __future__ import annotations

import libcst as cst

from codemods.base import Example, Rule
from codemods.current.analysis import INTEGER, Dtype, Evaluator, has_keyword
from codemods.syntax import append_argument, keyword, method_call, method_name, spelled

COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


class IntegerDivision(Rule):
    """``/`` and ``torch.div`` on integer tensors truncated toward zero before PyTorch 1.5 (1.6 raised); since
    1.7 they divide truly and return floats (``t /= 2`` on an integer tensor raises). Where both operands are
    known integers (a ``LongTensor``/``.long()``/integer ``dtype=`` tensor and an int),
    ``rounding_mode="trunc"`` keeps the legacy result exactly; ``//`` would floor, which differs for negative
    values (and truncated before 1.13: no spelling older than 1.8's ``rounding_mode=`` means the same on every
    torch). ``torch.arange`` and ``.sum()`` results are not "known integer": 0.3 gave a FloatTensor and a
    Python number for them. An integer tensor divided by something unknown is reported."""

    code = "TM504"
    min_torch = "1.8"
    name = "integer-division"
    summary = "`/` on integer tensors keeps the legacy truncation: `torch.div(a, b, rounding_mode=\"trunc\")`"
    triggers = ("/", "div")
    changes = (
        Example("import torch\nidx = torch.LongTensor([7, -7])\nrow = idx / 2\n",
                "import torch\nidx = torch.LongTensor([7, -7])\nrow = torch.div(idx, 2, rounding_mode=\"trunc\")\n"),
        Example("import torch\nt = x.long()\nt /= n_cols\n"),
        Example("import torch\nt = x.long()\nt /= 4\n",
                "import torch\nt = x.long()\nt.div_(4, rounding_mode=\"trunc\")\n"),
        Example("import torch\nk = torch.zeros(3, dtype=torch.long)\ny = k.div(2)\n",
                "import torch\nk = torch.zeros(3, dtype=torch.long)\ny = k.div(2, rounding_mode=\"trunc\")\n"),
        Example("import torch\npos = x.max(1)[1].long()\nr = torch.div(pos, 3)\n",
                "import torch\npos = x.max(1)[1].long()\nr = torch.div(pos, 3, rounding_mode=\"trunc\")\n"),
    )
    keeps = (
        "import torch\nacc = correct / total\n",
        "import torch\ny = torch.arange(10) / 2\n",
        "import torch\nx = torch.randn(3).long()\ny = x.float() / 2\n",
        "import torch\nt = torch.LongTensor([3])\nr = t / 2.0\n",
        "import torch\ns = (pred == y).sum() / len(y)\n",
        "import torch\nt = torch.LongTensor([3])\nr = torch.div(t, 2, rounding_mode='floor')\n",
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if type(node.operator) is cst.Divide:
            self._check(node, node.left, node.right, self._fix_operator)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if type(node.operator) is cst.DivideAssign:
            self._check(node, node.target, node.value, self._fix_augmented)

    def visit_Call(self, node: cst.Call) -> None:
        if method_name(node) not in ("div", "div_") or has_keyword(node, "rounding_mode"):
            return
        qualified = self.ctx.model.qualname(node.func)
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if qualified == "torch.div" and len(positional) == 2:
            self._check(node, positional[0], positional[1], self._fix_call)
        elif qualified is None and len(positional) == 1:
            self._check(node, node.func.value, positional[0], self._fix_call)

    def _check(self, node, left, right, fix) -> None:
        evaluator, scope = Evaluator(self.ctx), self.ctx.model.scope_of(node)
        kinds = {evaluator.dtype(left, scope), evaluator.dtype(right, scope)}
        if not INTEGER & kinds or Dtype.FLOAT in kinds:
            return
        message = ("integer tensor division truncated toward zero before PyTorch 1.5; it divides truly (floats) "
                   "since 1.7")
        if kinds <= INTEGER | {Dtype.SCALAR}:
            self.report(node, message + ": `rounding_mode=\"trunc\"` keeps the legacy result", fix)
        else:
            self.report(node, message + "; the other operand's type is not known here",
                        hint="`torch.div(a, b, rounding_mode=\"trunc\")` if both are integers")

    @staticmethod
    def _trunc() -> cst.Arg:
        return keyword("rounding_mode", cst.SimpleString('"trunc"'))

    def _fix_operator(self, updated: cst.BinaryOperation) -> cst.Call:
        div = cst.Attribute(value=spelled(self.ctx, "torch"), attr=cst.Name("div"))
        return cst.Call(func=div, args=[cst.Arg(updated.left, comma=COMMA), cst.Arg(updated.right, comma=COMMA),
                                        self._trunc()], lpar=updated.lpar, rpar=updated.rpar)

    def _fix_augmented(self, updated: cst.AugAssign) -> cst.Expr:
        return cst.Expr(method_call(updated.target, "div_", [cst.Arg(updated.value, comma=COMMA), self._trunc()]))

    def _fix_call(self, updated: cst.Call) -> cst.Call:
        return append_argument(updated, self._trunc())


RULE = IntegerDivision
